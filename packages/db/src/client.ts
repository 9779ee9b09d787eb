import { channel } from 'node:diagnostics_channel';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { CodedError } from '@latchkey/errors';
import { PgDialect, type PgDatabase, type PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite, type PgliteDatabase } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres, PostgresJsDatabase, PostgresJsSession } from 'drizzle-orm/postgres-js';
import { acquirePgliteLock } from './pglite-lock.js';
import { ALWAYS_AVAILABLE, type DatabaseHealth } from './faults/health.js';
import { createResilientPool, type ResilientPool } from './faults/resilient-pool.js';
import type { PoolStats } from './faults/statement-guard.js';
import * as schema from './schema/index.js';

/** Driver-independent Drizzle database: what application code should depend on. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DatabaseOptions {
  /** PostgreSQL connection URL. Unset/empty -> embedded PGlite under `dataDir`. */
  url?: string | undefined;
  /** Base data directory; PGlite persists in `${dataDir}/pglite`. */
  dataDir: string;
  /** postgres-js pool size (default 10, minimum 2: migrations reserve one connection). */
  poolSize?: number;
  /**
   * DATABASE_TIMEOUT: the span of a request's deadline (`deadlineFromNow`); on PostgreSQL also the deadline of a
   * statement sent outside a request's own, and the connect timeout. @default 5000
   */
  timeoutMs?: number;
  /**
   * Told when the embedded database's directory and lock are held, just before PGlite opens it (the first time it
   * creates it, which takes seconds): a server says so only once the faults it reports plainly are ruled out.
   */
  onOpening?: () => void;
}

export interface DatabaseHandle {
  db: Database;
  kind: 'postgres' | 'pglite';
  /** resolves true when `select 1` succeeds within timeoutMs (default 1000), false otherwise; never throws, never hangs */
  ping(timeoutMs?: number): Promise<boolean>;
  /**
   * The database as one request sees it: every statement sent through it, and its wait for a pooled connection,
   * must be answered before `deadline` (a `performance.now()` time; DATABASE_TIMEOUT after the request began).
   * Cheap to make (no AsyncLocalStorage, which taxes every promise of the process on Node 20). PostgreSQL only:
   * the embedded database answers `db` itself.
   */
  until(deadline: number): Database;
  /**
   * The deadline of database work that starts now: DATABASE_TIMEOUT (`timeoutMs`) from now, as a `performance.now()`
   * time. The one place a request's deadline is computed; every transport starts its request's deadline here.
   */
  deadlineFromNow(): number;
  /**
   * The database for work of the process itself (a poll, a purge), not of a request, even when a request set it
   * off: each statement has a deadline of its own (DATABASE_TIMEOUT), and none is published on QUERY_CHANNEL, so
   * a test counting one request's statements never counts a poll that ran meanwhile.
   */
  background: Database;
  /** reachable, or in a known outage (requests that need the database are then refused at once) */
  health: DatabaseHealth;
  /** the pool's occupancy now (PostgreSQL; the embedded database reports a pool of one) */
  poolStats(): PoolStats;
  close(): Promise<void>;
}

/** Driver objects runMigrations() and listen() need; kept off the public handle on purpose. */
export type DriverInternals =
  | { kind: 'postgres'; pool: ResilientPool }
  | { kind: 'pglite'; client: PGlite; db: PgliteDatabase<typeof schema> };

const internals = new WeakMap<DatabaseHandle, DriverInternals>();

/** @internal */
export function driverOf(handle: DatabaseHandle): DriverInternals {
  const driver = internals.get(handle);
  if (!driver) throw new TypeError('DatabaseHandle was not created by createDatabase()');
  return driver;
}

/**
 * Every SQL statement the application sends is published here as `{ sql }` (no parameters: they may hold
 * personal data), except those of background work (`DatabaseHandle.background`). Used to count statements in
 * tests; free when nobody subscribes.
 */
export const QUERY_CHANNEL = 'latchkey:db:query';
const queries = channel(QUERY_CHANNEL);
const queryLogger = {
  logQuery(sql: string): void {
    if (queries.hasSubscribers) queries.publish({ sql });
  },
};

/** A connection URL postgres-js cannot read (code DATABASE_URL_INVALID); the value is not shown: it may hold a password. */
class InvalidDatabaseUrlError extends CodedError<'DATABASE_URL_INVALID'> {
  constructor() {
    super(
      'InvalidDatabaseUrlError',
      'DATABASE_URL_INVALID',
      'Invalid PostgreSQL connection URL (value not shown: it may contain credentials)',
    );
  }
}

const DEFAULT_POOL_SIZE = 10;
const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_PING_TIMEOUT_MS = 1000;

export async function createDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  return options.url ? openPostgres(options.url, options) : openPglite(options.dataDir, timeoutOf(options), options.onOpening);
}

function timeoutOf(options: DatabaseOptions): number {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new RangeError('timeoutMs must be > 0');
  return timeoutMs;
}

function openPostgres(url: string, options: DatabaseOptions): DatabaseHandle {
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
  if (!Number.isInteger(poolSize) || poolSize < 2) {
    // A pool of one would let a single slow statement (or an open transaction) hold up every request.
    throw new RangeError(`poolSize must be an integer >= 2, got ${String(poolSize)}`);
  }
  const timeoutMs = timeoutOf(options);

  let pool: ResilientPool;
  try {
    // postgres-js connects lazily, so this only parses the URL.
    pool = createResilientPool({ url, poolSize, timeoutMs });
  } catch {
    // Parse errors (e.g. Node's ERR_INVALID_URL carries `.input`) would leak the URL and
    // its password into logs; replace them without a `cause`.
    throw new InvalidDatabaseUrlError();
  }
  const db = drizzlePostgres({ client: pool.sql, schema, logger: queryLogger });
  // A request's view shares the relational configuration drizzle built once above.
  const relational = { schema: db._.schema!, fullSchema: db._.fullSchema as typeof schema, tableNamesMap: db._.tableNamesMap };
  const dialect = new PgDialect();
  let closing: Promise<void> | undefined;
  /** A request's view, made once per request. */
  const requestView = (session: ConstructorParameters<typeof PostgresJsDatabase>[1]): Database =>
    new PostgresJsDatabase(dialect, session, relational) as unknown as Database;

  const handle: DatabaseHandle = {
    db,
    kind: 'postgres',
    until: (deadline) => requestView(new PostgresJsSession(pool.sqlUntil(deadline), dialect, relational, { logger: queryLogger })),
    deadlineFromNow: () => performance.now() + timeoutMs,
    background: new PostgresJsDatabase(dialect, new PostgresJsSession(pool.sqlOfItsOwn, dialect, relational, {}), relational) as Database,
    ping: async (timeoutMs) => {
      if (closing) return false;
      const ok = await settlesWithin(pool.current()`select 1`, timeoutMs);
      // A readiness check that disagrees with what the monitor believes is a reason to probe now.
      if (ok !== pool.health.available) pool.health.suspect();
      return ok;
    },
    health: pool.health,
    poolStats: pool.stats,
    // The timeout is a grace period for in-flight queries and also bounds a postgres-js
    // 3.4.9 bug: a connection that dropped mid-query never finishes end() on its own
    // (porsager/postgres#1097), so after an outage close() takes the full 5 s.
    close: () => (closing ??= pool.end(5)),
  };
  internals.set(handle, { kind: 'postgres', pool });
  return handle;
}

async function openPglite(dataDir: string, timeoutMs: number, onOpening?: () => void): Promise<DatabaseHandle> {
  const dir = join(dataDir, 'pglite');
  await mkdir(dir, { recursive: true });
  const release = acquirePgliteLock(dataDir);
  let client: PGlite;
  try {
    onOpening?.();
    client = await PGlite.create(dir);
  } catch (error) {
    release();
    throw error;
  }
  const db = drizzlePglite({ client, schema, logger: queryLogger });
  let closing: Promise<void> | undefined;

  const handle: DatabaseHandle = {
    db,
    kind: 'pglite',
    ping: (timeoutMs) => (closing ? Promise.resolve(false) : settlesWithin(client.query('select 1'), timeoutMs)),
    // In this process: no network to fail, no pool to wait for.
    until: () => db,
    // Bounds nothing here (see `until`), but a request's scope still carries it.
    deadlineFromNow: () => performance.now() + timeoutMs,
    background: drizzlePglite({ client, schema }),
    health: ALWAYS_AVAILABLE,
    poolStats: () => ({ size: 1, inUse: 0, waiting: 0 }),
    close: () => (closing ??= client.close().finally(release)),
  };
  internals.set(handle, { kind: 'pglite', client, db });
  return handle;
}

/**
 * true if `query` resolves within `timeoutMs`. The query's own rejection is always
 * consumed (no unhandled rejection), and a query that never settles (e.g. a blackholed
 * TCP connect) loses the race; postgres-js later rejects it via connect_timeout.
 */
function settlesWithin(query: PromiseLike<unknown>, timeoutMs = DEFAULT_PING_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, timeoutMs));
    const done = (ok: boolean) => {
      clearTimeout(timer);
      resolve(ok);
    };
    try {
      query.then(
        () => done(true),
        () => done(false),
      );
    } catch {
      done(false);
    }
  });
}
