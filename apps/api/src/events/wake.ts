import { listen, type DatabaseHandle } from '@latchkey/db';
import type { Logger } from 'pino';
import type { Config } from '../config/load.js';

/** The PostgreSQL NOTIFY channel and Redis channel that wake the instances' outbox readers. */
export const WAKE_CHANNEL = 'latchkey_document_events';

/**
 * Tells the instances of the service that the event outbox has new rows. It carries no event (the table is the
 * only record) and may lose a wake-up (NOTIFY and Redis pub/sub drop what is sent while a listener reconnects):
 * readers also poll.
 */
export interface WakeChannel {
  readonly kind: 'memory' | 'postgres' | 'redis';
  /** writers send the wake-up themselves with `pg_notify` in their transaction (PostgreSQL delivers it at commit) */
  readonly notifiesInTransaction: boolean;
  /** after a commit: wakes the other instances (Redis); returns at once and never throws */
  publish(): void;
  /** every wake-up from any instance, this one's included; returns the function that stops listening */
  onWake(listener: () => void): () => void;
  /** waits for the wake-ups under way (a CLI about to exit), then disconnects */
  close(): Promise<void>;
}

function listeners() {
  const set = new Set<() => void>();
  return {
    add(listener: () => void) {
      set.add(listener);
      return () => void set.delete(listener);
    },
    emit() {
      for (const listener of set) listener();
    },
  };
}

/** The embedded single-instance default: nobody else to wake (this instance's writers wake its reader directly). */
export function createMemoryWake(): WakeChannel {
  return { kind: 'memory', notifiesInTransaction: false, publish: () => undefined, onWake: listeners().add, close: async () => undefined };
}

/**
 * PostgreSQL LISTEN/NOTIFY: writers notify inside their transaction, so the wake-up leaves exactly when the row
 * becomes visible. `listen: false` (the CLI) only writes.
 */
export async function createPostgresWake(database: DatabaseHandle, options: { listen: boolean }): Promise<WakeChannel> {
  const local = listeners();
  const stop = options.listen ? await listen(database, WAKE_CHANNEL, local.emit) : async () => undefined;
  return { kind: 'postgres', notifiesInTransaction: true, publish: () => undefined, onWake: local.add, close: stop };
}

/** Redis pub/sub (REDIS_URL): one connection publishes after each commit; with `listen`, a second one subscribes. */
export async function createRedisWake(url: string, options: { listen: boolean; onError: (error: Error) => void }): Promise<WakeChannel> {
  // ioredis is loaded only where REDIS_URL is set: about 11 MB of resident memory otherwise spent for nothing.
  const { Redis } = await import('ioredis');
  const local = listeners();
  const connection = { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true } as const;
  const publisher = new Redis(url, connection);
  const subscriber = options.listen ? new Redis(url, connection) : undefined;
  // Connection trouble after start-up is reported (ioredis reconnects and re-subscribes by itself).
  publisher.on('error', options.onError);
  subscriber?.on('error', options.onError);
  try {
    await Promise.all([publisher.connect(), subscriber?.connect()]);
    await subscriber?.subscribe(WAKE_CHANNEL);
  } catch (error) {
    publisher.disconnect();
    subscriber?.disconnect();
    throw error;
  }
  subscriber?.on('message', (channel: string) => {
    if (channel === WAKE_CHANNEL) local.emit();
  });
  const pending = new Set<Promise<unknown>>();
  return {
    kind: 'redis',
    notifiesInTransaction: false,
    publish() {
      // A lost wake-up only delays delivery until the readers' next poll: report it, never fail the change.
      const sent = publisher.publish(WAKE_CHANNEL, '').catch((error: Error) => options.onError(error));
      pending.add(sent);
      void sent.finally(() => pending.delete(sent));
    },
    onWake: local.add,
    async close() {
      await Promise.allSettled([...pending]);
      await Promise.allSettled([subscriber?.quit(), publisher.quit()]);
    },
  };
}

/**
 * The wake-up channel of this deployment: Redis pub/sub when REDIS_URL is set, else PostgreSQL LISTEN/NOTIFY
 * when DATABASE_URL is, else none beyond this process (the embedded single-instance default).
 */
export function createWakeChannel(
  config: Config,
  database: DatabaseHandle,
  logger: Logger,
  options: { listen: boolean },
): Promise<WakeChannel> {
  if (config.redisUrl) {
    return createRedisWake(config.redisUrl, {
      listen: options.listen,
      onError: (error) => logger.warn({ err: error }, 'event wake-ups: Redis connection trouble'),
    });
  }
  if (database.kind === 'postgres') return createPostgresWake(database, options);
  return Promise.resolve(createMemoryWake());
}
