import { DatabaseUnavailableError } from '@latchkey/db';
import { Pool } from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';

// Where the counters live: in this process, in Redis, or in PostgreSQL (rate-limiter-flexible's stores, opened
// here with the settings each needs).

/** Options of one rate-limiter-flexible limiter, in its own units (seconds). */
export interface LimiterSpec {
  keyPrefix: string;
  points: number;
  duration: number;
  blockDuration: number;
}

/**
 * An opened counter store: it makes limiters that all count in the same place, and owns the connection they
 * share. Opening is asynchronous (connect, create the table) so that a misconfigured store fails at startup,
 * not on the first login.
 */
export interface LimiterStore {
  create(spec: LimiterSpec): RateLimiterAbstract;
  close(): Promise<void>;
}

/**
 * Counters in this process only: right for the embedded single-instance default and for tests. A second
 * instance would keep its own counts, multiplying every limit (several instances must share their counters).
 */
export function openMemoryStore(): LimiterStore {
  return {
    create: (spec) => new RateLimiterMemory(spec),
    close: async () => undefined,
  };
}

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

/** The table rate-limiter-flexible creates and uses (key varchar(255) primary key, points, expire ms). */
export const RATE_LIMIT_TABLE = 'rate_limits';

const POOL_SIZE = 4;
const SWEEP_INTERVAL_MS = 5 * 60_000;
const SWEEP_AFTER_EXPIRY_MS = 60 * 60_000;

/**
 * Counters in PostgreSQL, shared by every instance on the database.
 *
 * Client: rate-limiter-flexible's RateLimiterPostgres accepts node-postgres (`pg` Client or Pool), Sequelize,
 * TypeORM or Knex (`storeType` 'client' | 'pool' | 'sequelize' | 'knex' | 'typeorm'); it calls
 * `query({ name, text, values })` and reads `rows`/`rowCount`, the node-postgres interface. Our postgres-js
 * (drizzle) connection has neither, so the limiters get a small `pg.Pool` of their own on the same DATABASE_URL.
 *
 * The library creates its table itself (`CREATE TABLE IF NOT EXISTS`, concurrent creation by another instance
 * tolerated); opening waits for that, and the limiters are then made with `tableCreated: true`.
 */
export async function openPostgresStore(
  url: string,
  options: { timeoutMs?: number; available?: () => boolean } = {},
): Promise<LimiterStore> {
  const timeoutMs = options.timeoutMs ?? 5000;
  // Bounded like the service's own pool: the wait for a connection and each query (client side: a black-holed
  // connection never answers a server-side timeout), TCP keepalive, and abandoned transactions ended by the server.
  const pool = new Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    idle_in_transaction_session_timeout: timeoutMs + 1000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle connection that breaks emits 'error' on the pool (fatal if unheard); the next query reports it.
  pool.on('error', () => undefined);
  // During a known outage a check fails at once (the endpoint answers 503) instead of waiting out the timeout.
  const available = options.available;
  if (available) {
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    pool.query = ((...args: unknown[]) => (available() ? query(...args) : Promise.reject(new DatabaseUnavailableError()))) as Pool['query'];
  }
  try {
    await createTable(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  // Expired rows are harmless but accumulate. The library's own sweeper runs once per limiter and cannot be
  // stopped on close, so each store runs one sweep (same statement as the library's) and stops it on close.
  const sweeper = setInterval(() => {
    pool.query(`DELETE FROM "${RATE_LIMIT_TABLE}" WHERE expire < $1`, [Date.now() - SWEEP_AFTER_EXPIRY_MS]).catch(() => undefined);
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
  return {
    create: (spec) =>
      new RateLimiterPostgres({
        ...spec,
        storeClient: pool,
        storeType: 'pool',
        tableName: RATE_LIMIT_TABLE,
        tableCreated: true,
        clearExpiredByTimeout: false,
      }),
    close: async () => {
      clearInterval(sweeper);
      await pool.end();
    },
  };
}

/**
 * PostgreSQL's answers when another session created the table (or its row type) between our `IF NOT EXISTS` check
 * and our insert into the catalog: instances started together on a fresh database meet them.
 */
const CREATED_CONCURRENTLY = new Set(['42P07', '42710', '23505']);

/** The table, created if missing; a creation that raced another instance's is tried again (it then finds the table). */
async function createTable(pool: Pool): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await createTableOnce(pool);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (attempt >= 3 || typeof code !== 'string' || !CREATED_CONCURRENTLY.has(code)) throw error;
    }
  }
}

/** Lets the library create its table (it does so in its constructor and reports through the callback). */
function createTableOnce(pool: Pool): Promise<void> {
  return new Promise((resolve, reject) => {
    new RateLimiterPostgres(
      {
        storeClient: pool,
        storeType: 'pool',
        tableName: RATE_LIMIT_TABLE,
        keyPrefix: 'table',
        points: 1,
        duration: 1,
        clearExpiredByTimeout: false,
      },
      (error) => (error ? reject(error) : resolve()),
    );
  });
}
