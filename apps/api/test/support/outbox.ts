import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** A message the development outbox wrote (one JSON file per message under DATA_DIR/outbox). */
export interface OutboxMessage {
  to: string;
  magicLink: string;
  text: string;
  code?: string;
}

/** The development outbox of a service's DATA_DIR, read as a test reads a mailbox. */
export function outboxOf(dataDir: string) {
  const dir = path.join(dataDir, 'outbox');
  const messages = (): OutboxMessage[] =>
    existsSync(dir)
      ? readdirSync(dir).filter((name) => name.endsWith('.json')).sort().map((name) => JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as OutboxMessage)
      : [];
  return {
    count: () => messages().length,
    /** the newest message once there are more than `after` (delivery happens after the answer is sent) */
    async next(after: number): Promise<OutboxMessage> {
      for (let i = 0; i < 100; i++) {
        const all = messages();
        if (all.length > after) return all.at(-1)!;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error('no message arrived in the outbox');
    },
  };
}

/** The token of a magic link. */
export const tokenOf = (message: OutboxMessage) => new URL(message.magicLink).searchParams.get('token')!;
