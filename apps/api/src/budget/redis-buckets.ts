import type { Redis } from 'ioredis';
import type { SharedBuckets } from './shared-buckets.js';
import { checkPoints, checkReservation, inMilli, toMilli, toPoints } from './shared-bucket-units.js';

/** Every bucket's key starts with this: the budgets share a Redis with the rate limits and the wake-ups. */
export const BUDGET_KEY_PREFIX = 'latchkey:budget:';

/**
 * How long past the moment its bucket would be full again a key lives. Forgetting a full bucket changes nothing (a
 * bucket never seen is full); the margin covers a size that grew meanwhile and the clock's rounding.
 */
const EXPIRY_MARGIN_MS = 1000;

/**
 * What every script shares. A bucket is a hash of `level` (thousandths of a point) and `at` (ms, Redis `TIME`),
 * refilled to now by whole milliseconds and rounded down, like the memory store's (bucket.ts). ARGV[1] is the
 * capacity (thousandths of a point), ARGV[2] the refill (thousandths of a point per millisecond). Numbers are
 * written with `%.0f`: Lua's own conversion of a number to text keeps 14 digits only.
 */
const PRELUDE = `
local capacity, rate = tonumber(ARGV[1]), tonumber(ARGV[2])
local function now_ms()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local function clamp(level)
  return math.min(capacity, math.max(-capacity, level))
end
local function refilled(now)
  local stored = redis.call('HMGET', KEYS[1], 'level', 'at')
  local level, at = tonumber(stored[1]), tonumber(stored[2])
  if not level or not at then return capacity, now end
  return clamp(level + math.floor(math.max(0, now - at) * rate)), math.max(at, now)
end
local function store(level, at, now)
  redis.call('HSET', KEYS[1], 'level', string.format('%.0f', level), 'at', string.format('%.0f', at))
  local full_in = math.ceil((capacity - level) / rate) + (at - now)
  redis.call('PEXPIRE', KEYS[1], string.format('%.0f', full_in + ${EXPIRY_MARGIN_MS}))
end
`;

/** ARGV[3] least, ARGV[4] most (thousandths of a point); answers { granted, level after }. */
const RESERVE = `${PRELUDE}
local least, most = tonumber(ARGV[3]), tonumber(ARGV[4])
local now = now_ms()
local level, at = refilled(now)
local granted = 0
if level >= least then granted = math.min(most, level) end
store(level - granted, at, now)
return { granted, level - granted }
`;

/** ARGV[3] the amount (thousandths of a point, negative: a debt); answers the level after. */
const GIVE = `${PRELUDE}
local now = now_ms()
local level, at = refilled(now)
level = clamp(level + tonumber(ARGV[3]))
store(level, at, now)
return level
`;

const PEEK = `${PRELUDE}
local level = refilled(now_ms())
return level
`;

/** The scripts as commands of the connection (ioredis' `defineCommand`: EVALSHA, EVAL when Redis lacks it). */
interface BudgetCommands {
  budgetReserve(key: string, capacity: number, rate: number, least: number, most: number): Promise<[number, number]>;
  budgetGive(key: string, capacity: number, rate: number, amount: number): Promise<number>;
  budgetPeek(key: string, capacity: number, rate: number): Promise<number>;
}

export interface RedisBucketsOptions {
  /** how long a command (and connecting) may take before it fails. @default 5000 */
  timeoutMs?: number;
}

/**
 * The shared buckets in Redis (REDIS_URL): one hash per bucket, each call one Lua script (atomic: Redis runs one
 * script at a time) refilled by Redis' own clock, each key expiring once its bucket would be full again so that
 * Redis keeps only buckets in use.
 *
 * Connected at once, so that a wrong REDIS_URL fails at start-up. While Redis is unreachable, calls fail at once
 * (`enableOfflineQueue: false`) instead of queueing for the reconnection: the caller spends its local buckets
 * meanwhile, and ioredis reconnects by itself.
 */
export async function openRedisBuckets(url: string, options: RedisBucketsOptions = {}): Promise<SharedBuckets> {
  const client = await connect(url, options.timeoutMs ?? 5000);
  const commands = client as unknown as BudgetCommands;
  const keyOf = (key: string) => `${BUDGET_KEY_PREFIX}${key}`;
  return {
    kind: 'redis',
    async reserve(key, size, least, most) {
      checkReservation(least, most);
      const { capacity, refillPerMs } = inMilli(size);
      const [granted, level] = await commands.budgetReserve(keyOf(key), capacity, refillPerMs, toMilli(least), toMilli(most));
      return { granted: toPoints(Number(granted)), level: toPoints(Number(level)) };
    },
    async give(key, size, points) {
      checkPoints(points);
      const { capacity, refillPerMs } = inMilli(size);
      return toPoints(Number(await commands.budgetGive(keyOf(key), capacity, refillPerMs, toMilli(points))));
    },
    async peek(key, size) {
      const { capacity, refillPerMs } = inMilli(size);
      return toPoints(Number(await commands.budgetPeek(keyOf(key), capacity, refillPerMs)));
    },
    async reset(key) {
      await client.del(keyOf(key));
    },
    async close() {
      await client.quit().catch(() => client.disconnect());
    },
  };
}

/** A connection with the budget scripts defined, connected (or the reason it could not be). */
async function connect(url: string, timeoutMs: number): Promise<Redis> {
  // Loaded only where REDIS_URL is set (about 11 MB of resident memory).
  const { Redis } = await import('ioredis');
  // Each command answers or fails within the timeout; ioredis' default is to retry a command 20 times.
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: timeoutMs,
    connectTimeout: timeoutMs,
  });
  // ioredis reconnects by itself and emits 'error' meanwhile; failed commands reject, which the caller handles.
  client.on('error', () => undefined);
  client.defineCommand('budgetReserve', { numberOfKeys: 1, lua: RESERVE });
  client.defineCommand('budgetGive', { numberOfKeys: 1, lua: GIVE });
  client.defineCommand('budgetPeek', { numberOfKeys: 1, lua: PEEK });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw error;
  }
  return client;
}
