import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { QUERY_CHANNEL } from '@latchkey/db';

/** The SQL statements the server sends while `run` executes (published by packages/db on QUERY_CHANNEL). */
export async function statementsDuring<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const listener = (message: unknown) => statements.push((message as { sql: string }).sql);
  subscribe(QUERY_CHANNEL, listener);
  try {
    return { result: await run(), statements };
  } finally {
    unsubscribe(QUERY_CHANNEL, listener);
  }
}
