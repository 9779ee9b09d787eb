import type { DatabaseHandle } from '@latchkey/db';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { createMemoryBus, createPostgresBus, createRedisBus } from './bus.js';
import type { EventBus } from './types.js';

/**
 * The event bus behind subscriptions (DESIGN.md Scale-out): Redis pub/sub when REDIS_URL is set, else
 * PostgreSQL LISTEN/NOTIFY when DATABASE_URL is, else in this process (the embedded single-instance default).
 */
export function createEventBus(config: Config, database: DatabaseHandle, logger: Logger): Promise<EventBus> {
  const onInvalid = (payload: string) => logger.warn({ bytes: payload.length }, 'ignored a malformed document event from the bus');
  if (config.redisUrl) return createRedisBus(config.redisUrl, onInvalid, (error) => logger.warn({ err: error }, 'event bus: Redis connection trouble'));
  if (config.database.url) return createPostgresBus(database, onInvalid);
  return Promise.resolve(createMemoryBus());
}
