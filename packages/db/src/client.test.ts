import { onPostgres } from './testing/index.js';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { eq, sql } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestTarget, serverUrl } from '../tests/helpers.js';
import { withDatabaseDeadline } from './faults/deadline.js';
import { countStatements } from './testing/statements.js';
import { startTcpProxy } from './testing/tcp-proxy.js';
import { createDatabase, type DatabaseHandle } from './client.js';
import { runMigrations } from './migrate.js';
import { users } from './schema/index.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Fresh migrated database; `url` lets a test route the connection (e.g. via a proxy). */
async function migratedHandle(routeUrl: (url: string) => string = (u) => u): Promise<DatabaseHandle> {
  const target = await createTestTarget({ migrated: true });
  cleanups.push(() => target.cleanup());
  const handle = await createDatabase({ url: target.url && routeUrl(target.url), dataDir: target.dataDir });
  cleanups.push(() => handle.close());
  await runMigrations(handle);
  return handle;
}

/** Postgres error code, looking through Drizzle's DrizzleQueryError wrapper. */
function pgCode(error: unknown): string | undefined {
  for (let e = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe(`database handle (${serverUrl ? 'PostgreSQL' : 'PGlite'})`, () => {
  // One migrated database shared by the data tests (distinct emails keep them
  // independent): booting PGlite costs seconds per fresh data directory.
  let shared: DatabaseHandle;
  beforeAll(async () => {
    const target = await createTestTarget({ migrated: true });
    shared = await createDatabase({ url: target.url, dataDir: target.dataDir });
    await runMigrations(shared);
    return async () => {
      await shared.close();
      await target.cleanup();
    };
  });

  it('reports its driver kind and pings a live database', async () => {
    expect(shared.kind).toBe(serverUrl ? 'postgres' : 'pglite');
    expect(await shared.ping()).toBe(true);
  });

  it('round-trips a user', async () => {
    const { db } = shared;
    const [inserted] = await db.insert(users).values({ email: 'ada@example.com' }).returning();
    expect(inserted).toMatchObject({ email: 'ada@example.com', displayName: null });
    expect(inserted?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(inserted?.createdAt).toBeInstanceOf(Date);

    const [selected] = await db.select().from(users).where(eq(users.email, 'ada@example.com'));
    expect(selected).toEqual(inserted);
  });

  it("a request's view (until) answers selects, transactions and relational queries, like the handle's own db", async () => {
    const view = shared.until(performance.now() + 5000);
    await view.insert(users).values({ email: 'view@example.com' });
    const [selected] = await view.select().from(users).where(eq(users.email, 'view@example.com'));
    expect(selected?.email).toBe('view@example.com');
    // A request view answers relational queries as the handle's own db does.
    const found = await view.query.users.findFirst({ where: eq(users.email, 'view@example.com') });
    expect(found).toEqual(selected);
    expect(await view.transaction(async (tx) => tx.query.users.findFirst({ where: eq(users.email, 'view@example.com') }))).toEqual(
      selected,
    );
  });

  it('bumps updated_at on update through Drizzle', async () => {
    const { db } = shared;
    const past = new Date('2020-01-01T00:00:00Z');
    const [row] = await db.insert(users).values({ email: 'u@example.com', updatedAt: past }).returning();
    const [updated] = await db.update(users).set({ displayName: 'U' }).where(eq(users.id, row!.id)).returning();
    expect(updated!.updatedAt.getTime()).toBeGreaterThan(past.getTime());
  });

  it('enforces unique, lower-cased emails', async () => {
    const { db } = shared;
    await db.insert(users).values({ email: 'grace@example.com' });
    expect(pgCode(await rejection(db.insert(users).values({ email: 'grace@example.com' })))).toBe('23505');
    // Mixed case is rejected by the CHECK constraint rather than slipping past UNIQUE.
    expect(pgCode(await rejection(db.insert(users).values({ email: 'Grace@example.com' })))).toBe('23514');
  });

  it("statements of background work (DatabaseHandle.background) stay off QUERY_CHANNEL; a request's own statements are published", async () => {
    const db = await migratedHandle();
    const published = await countStatements(async () => {
      await db.db.select().from(users);
      await db.background.select().from(users);
      await db.background.execute(sql`select 1`);
    });
    expect(published).toBe(1);
  });

  it.runIf(onPostgres('the PostgreSQL-only tests'))(
    "background work set off inside a request's deadline does not inherit it: its statements get deadlines of their own",
    async () => {
      const db = await migratedHandle();
      // A deadline already past would refuse any statement bounded by it (PostgreSQL; the embedded database has none).
      const rows = await withDatabaseDeadline(performance.now() - 1, () => db.background.execute(sql`select 1 as one`));
      expect(rows).toBeDefined();
    },
  );

  it('ping() is false (not a throw) after close, and close() is idempotent', async () => {
    const handle = await migratedHandle();
    await handle.close();
    await handle.close();
    expect(await handle.ping()).toBe(false);
  });
});

describe('createDatabase option checks', () => {
  it('never echoes the connection URL in errors', async () => {
    const error = await rejection(createDatabase({ url: 'postgres://u:s3cret-pw@[bad/x', dataDir: '/nonexistent' }));
    expect(String(error)).not.toContain('s3cret-pw');
    expect(JSON.stringify(error)).not.toContain('s3cret-pw');
    expect((error as Error).cause).toBeUndefined();
  });

  it('rejects a pool too small for runMigrations', async () => {
    await expect(createDatabase({ url: 'postgres://localhost/x', dataDir: '/nonexistent', poolSize: 1 })).rejects.toThrow(RangeError);
  });
});

if (!serverUrl) {
  console.info(
    '[db tests] DATABASE_URL not set: skipping the unreachable-server ping test (PGlite runs in-process and cannot become unreachable)',
  );
}

describe.runIf(onPostgres('the PostgreSQL-only tests'))('ping() across an outage (PostgreSQL only)', () => {
  const PASSWORD = 's3cret-in-url';

  async function proxiedHandle() {
    const upstream = new URL(serverUrl!);
    const proxy = await startTcpProxy(upstream.hostname, Number(upstream.port || 5432));
    cleanups.push(() => proxy.close());
    const handle = await migratedHandle((url) => {
      const routed = new URL(proxy.routeUrl(url));
      routed.password = PASSWORD; // ignored by trust auth; must never surface in errors
      return routed.toString();
    });
    return { proxy, handle };
  }

  it('returns false while the server is unreachable and true once it is back', async () => {
    const { proxy, handle } = await proxiedHandle();
    expect(await handle.ping()).toBe(true);

    await proxy.drop(); // resets pooled connections and refuses new ones
    const started = Date.now();
    expect(await handle.ping(1000)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1500);

    const error = await rejection(handle.db.select().from(users));
    expect(`${String(error)} ${String((error as Error).cause)} ${JSON.stringify(error)}`).not.toContain(PASSWORD);

    await proxy.restore(); // same port
    expect(await handle.ping(2000)).toBe(true);
  });

  it('returns false within the timeout when connections hang', async () => {
    const { proxy, handle } = await proxiedHandle();
    await proxy.drop();
    await proxy.restore();
    proxy.blackhole(); // accepts TCP but never answers: connects hang until connect_timeout

    const started = Date.now();
    expect(await handle.ping(300)).toBe(false);
    expect(Date.now() - started).toBeLessThan(800);

    await proxy.drop();
    await proxy.restore();
    // The hung connect attempt is abandoned after connect_timeout (2 s); then it recovers.
    await expect.poll(() => handle.ping(500), { timeout: 10_000, interval: 250 }).toBe(true);
  });
});

describe.runIf(onPostgres('the PostgreSQL-only tests'))('postgres-js, as patched here (patches/postgres@3.4.9.patch)', () => {
  it('a connection whose array-types query fails (cancelled by statement_timeout) rejects its query; nothing escapes as an unhandled rejection that would end the process', async () => {
    const escaped: unknown[] = [];
    const record = (reason: unknown) => void escaped.push(reason);
    process.on('unhandledRejection', record);
    const { default: postgres } = await import('postgres');
    // The types query is the first statement of every new connection: a 1 ms statement_timeout cancels it.
    const client = postgres(serverUrl!, { max: 1, connection: { statement_timeout: 1 }, onnotice: () => undefined });
    try {
      // The query is rejected by the types query's failure, so that failure has been handled by now; Node reports a
      // rejection nobody handled once the callback it happened in has run its microtasks, which one turn of the
      // event loop (setImmediate) guarantees.
      await client`select pg_sleep(0.05)`.catch(() => undefined);
      await new Promise((resolve) => setImmediate(resolve));
      expect(escaped).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
      await client.end({ timeout: 1 });
    }
  });
});

describe("postgres-js's connection queues, as patched here (patches/postgres@3.4.9.patch)", () => {
  it('a queue that is never empty (the busy connections under steady load) does not keep a hole for every query it ever served', async () => {
    // The queue module is internal to postgres-js (not in its exports): found beside its entry point.
    const entry = fileURLToPath(import.meta.resolve('postgres'));
    const { default: Queue } = (await import(pathToFileURL(join(dirname(entry), 'queue.js')).href)) as {
      default: () => { push(x: object): object; shift(): object; remove(x: object): object | null; length: number };
    };
    const queue = Queue();
    const connections = [{}, {}, {}];
    for (const connection of connections) queue.push(connection);
    // What the pool does per query while every connection stays busy: take the longest-busy one, put it back.
    for (let query = 0; query < 10_000; query++) queue.push(queue.shift());

    // remove() looks its connection up with indexOf over the queue's array: how long is that array now?
    const scanned: number[] = [];
    const indexOf = Array.prototype.indexOf;
    Array.prototype.indexOf = function (this: unknown[], ...args: [unknown, number?]) {
      scanned.push(this.length);
      return indexOf.apply(this, args);
    };
    try {
      expect(queue.remove(connections[1]!)).toBe(connections[1]);
    } finally {
      Array.prototype.indexOf = indexOf;
    }
    expect(queue.length).toBe(2);
    // Unpatched, the array held 10,003 entries (10,000 of them holes); compacted, it stays near the live count.
    expect(Math.max(...scanned)).toBeLessThan(200);
  });
});
