import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { definedErrors } from '@latchkey/errors';
import { renderMessage } from './message.js';
import type { DeliveryHandler } from './types.js';

export interface DevOutboxOptions {
  /** where messages are written, one JSON file each (e.g. `${DATA_DIR}/outbox`) */
  dir: string;
  /** true when NODE_ENV=production: the outbox is refused there */
  production: boolean;
  /** where each message is echoed for the developer. @default process.stderr */
  echo?: { write(text: string): unknown };
  /** the time a message is sent at, which orders the files (tests give distinct ones). @default the system clock */
  now?: () => Date;
}

export const DEV_OUTBOX_ERRORS = {
  /** NODE_ENV=production: sign-in messages written to a local folder would reach nobody */
  DEV_OUTBOX_IN_PRODUCTION: 'The development outbox cannot be used in production: configure SMTP_URL (or another delivery handler).',
} as const;

export class OutboxRefusedError extends definedErrors('OutboxRefusedError', DEV_OUTBOX_ERRORS) {
  constructor() {
    super('DEV_OUTBOX_IN_PRODUCTION');
  }
}

interface StoredMessage {
  to: string;
  subject: string;
  text: string;
  magicLink: string;
  expiresAt: string;
  sentAt: string;
}

/**
 * Development delivery: each message becomes a file under `dir` (newest last by name) and is echoed to the
 * console. Refused in production. The token is in the message, as it would be in an e-mail, never in the
 * database or the service's log.
 */
export function createDevOutbox(options: DevOutboxOptions): DeliveryHandler {
  if (options.production) throw new OutboxRefusedError();
  const echo = options.echo ?? process.stderr;
  return {
    name: 'dev-outbox',
    async deliver(message) {
      const sentAt = options.now?.() ?? new Date();
      const stored: StoredMessage = {
        to: message.to,
        ...renderMessage(message),
        magicLink: message.magicLink,
        expiresAt: message.expiresAt.toISOString(),
        sentAt: sentAt.toISOString(),
      };
      await mkdir(options.dir, { recursive: true, mode: 0o700 });
      const name = `${sentAt.toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.json`;
      // Written whole, then renamed: a reader never sees half a message.
      const temporary = join(options.dir, `.${name}.tmp`);
      await writeFile(temporary, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
      await rename(temporary, join(options.dir, name));
      echo.write(`[outbox] to ${stored.to}: ${stored.subject}\n${stored.text}\n`);
    },
  };
}

/** The latest `limit` messages of the outbox, oldest first (for `pnpm latchkey outbox` and tests). */
export async function readOutbox(dir: string, limit = 10): Promise<StoredMessage[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => name.endsWith('.json') && !name.startsWith('.'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const latest = names.sort().slice(-Math.max(0, limit));
  return Promise.all(latest.map(async (name) => JSON.parse(await readFile(join(dir, name), 'utf8')) as StoredMessage));
}
