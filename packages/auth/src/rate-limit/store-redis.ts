import { RateLimiterRedis } from 'rate-limiter-flexible';
import type { LimiterStore } from './limiter-store.js';

/**
 * Counters in Redis (when REDIS_URL is set), shared by every instance using it.
 *
 * Client: ioredis, the one RateLimiterRedis works with by default (it registers its atomic increment script
 * with `defineCommand` and reads ioredis' result format); node-redis needs extra flags (`useRedisPackage`).
 * `rejectIfRedisNotReady`: while Redis is unreachable, checks fail at once (the endpoint answers 503) instead of
 * queueing login requests behind a reconnect.
 */
export async function openRedisStore(url: string, options: { timeoutMs?: number } = {}): Promise<LimiterStore> {
  const timeoutMs = options.timeoutMs ?? 5000;
  // Loaded only where REDIS_URL is set (about 11 MB of resident memory).
  const { Redis } = await import('ioredis');
  // Each command answers or fails within the timeout; ioredis' default is to retry a command 20 times.
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, commandTimeout: timeoutMs, connectTimeout: timeoutMs });
  // ioredis reconnects by itself and emits 'error' meanwhile; failed commands reject, which is what we report.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw error;
  }
  return {
    create: (spec) => new RateLimiterRedis({ ...spec, storeClient: client, rejectIfRedisNotReady: true }),
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}
