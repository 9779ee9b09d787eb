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
      ? readdirSync(dir)
          .filter((name) => name.endsWith('.json'))
          .sort()
          .map((name) => JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as OutboxMessage)
      : [];
  return {
    count: () => messages().length,
    /**
     * The newest message (to `to`, when given) among those after the first `after`, once it has arrived: delivery
     * happens after the answer is sent, so messages of earlier requests may still be arriving. Looked for every
     * 50 ms until a deadline far above any real delivery time.
     */
    async next(after: number, to?: string, timeoutMs = 30_000): Promise<OutboxMessage> {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const arrived = messages()
          .slice(after)
          .filter((message) => to === undefined || message.to === to);
        if (arrived.length > 0) return arrived.at(-1)!;
        if (performance.now() > deadline) throw new Error(`no message${to ? ` to ${to}` : ''} arrived in the outbox`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

/** The token of a magic link. */
export const tokenOf = (message: OutboxMessage) => new URL(message.magicLink).searchParams.get('token')!;

/** The 6-digit code of a message (typed in the browser that asked for it). */
export function codeOf(message: OutboxMessage): string {
  const code = /Or type this code in the browser where you asked for it: ([0-9]{6})\n/.exec(message.text)?.[1];
  if (!code) throw new Error('the message carries no code');
  return code;
}
