import { channel } from 'node:diagnostics_channel';
import { QUERY_CHANNEL } from '../client.js';

/**
 * Tests only: how many SQL statements `action` sends (through QUERY_CHANNEL). A rejection of `action` is not
 * this helper's business (callers that refuse input before any query expect one): it is swallowed.
 */
export async function countStatements(action: () => Promise<unknown>): Promise<number> {
  let statements = 0;
  const count = () => {
    statements += 1;
  };
  channel(QUERY_CHANNEL).subscribe(count);
  try {
    await action().catch(() => undefined);
  } finally {
    channel(QUERY_CHANNEL).unsubscribe(count);
  }
  return statements;
}

/** Tests only: the SQL text of each statement sent while `run` executes, with what `run` answered. */
export async function statementsDuring<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const listener = (message: unknown) => statements.push((message as { sql: string }).sql);
  channel(QUERY_CHANNEL).subscribe(listener);
  try {
    return { result: await run(), statements };
  } finally {
    channel(QUERY_CHANNEL).unsubscribe(listener);
  }
}
