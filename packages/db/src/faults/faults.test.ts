import { onPostgres } from '../testing/index.js';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type DatabaseHandle } from '../client.js';
import { createOwnDatabase } from '../testing/own-database.js';
import { startTcpProxy, type TcpProxy } from '../testing/tcp-proxy.js';
import { withDatabaseDeadline } from './deadline.js';
import { DatabaseTimeoutError, DatabaseUnavailableError, isDatabaseUnavailable } from './errors.js';

const serverUrl = process.env['DATABASE_URL'] || undefined;

/** drizzle wraps driver errors ("Failed query: ...") with the original as `cause`. */
const causeOf = (outcome: unknown) => (outcome instanceof Error && outcome.cause ? outcome.cause : outcome);

describe('isDatabaseUnavailable: faults of the environment, not mistakes in a statement', () => {
  it.each([
    ['our own outage refusal', new DatabaseUnavailableError()],
    ['a missed deadline', new DatabaseTimeoutError()],
    [
      "a refused connection (under drizzle's wrapper)",
      Object.assign(new Error('query failed'), { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) }),
    ],
    ['postgres-js: connection closed', Object.assign(new Error('x'), { code: 'CONNECTION_CLOSED' })],
    [
      'the server shutting down (57P01)',
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    ],
    ['node-postgres: terminated', new Error('Connection terminated unexpectedly')],
  ])('%s is unavailability', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['a syntax error', Object.assign(new Error('syntax'), { code: '42601' })],
    ['a plain bug', new TypeError('x is undefined')],
    ['nothing', undefined],
  ])('%s is not', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

if (!serverUrl) {
  process.stdout.write(
    '[db tests] DATABASE_URL not set: the outage tests need PostgreSQL (the embedded database has no network to fail)\n',
  );
}

describe.runIf(onPostgres('the PostgreSQL-only tests'))(
  'bounded statements during database faults (PostgreSQL through a fault-injecting proxy)',
  () => {
    const TIMEOUT_MS = 1500;
    let own: { url: string; drop(): Promise<void> };
    let proxy: TcpProxy;
    let database: DatabaseHandle;

    beforeAll(async () => {
      own = await createOwnDatabase(serverUrl!, 'faults');
      const setup = await createDatabase({ url: own.url, dataDir: '/nonexistent', poolSize: 2 });
      await setup.db.execute(sql`create table marks (id text primary key)`);
      await setup.close();
      const target = new URL(own.url);
      proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    });
    afterEach(async () => {
      await database?.close();
      if (proxy.state !== 'forwarding') await proxy.restore();
    });
    afterAll(async () => {
      await proxy?.close();
      await own?.drop();
    });

    const open = (poolSize = 4) =>
      createDatabase({ url: proxy.routeUrl(own.url), dataDir: '/nonexistent', poolSize, timeoutMs: TIMEOUT_MS });
    const timed = async (run: () => Promise<unknown>) => {
      const started = performance.now();
      const outcome = await run().then(
        () => 'ok',
        (error: unknown) => error,
      );
      return { outcome, ms: performance.now() - started };
    };
    /**
     * A deadline's answer comes from its timer, not from the database: this ceiling is far above a loaded machine's
     * lateness past the deadline (the driver by itself took ~19.5 s to give up), not a measure of it.
     */
    const DEADLINE_CEILING_MS = 4 * TIMEOUT_MS;
    /**
     * `run`'s outcome, and how many statements the pool let through to the database (connections through the proxy
     * are no measure: during an outage the health probe opens its own whenever its timer says).
     */
    const counted = async (run: () => Promise<unknown>) => {
      const admitted = database.poolStats().admitted!;
      const { outcome } = await timed(run);
      return { outcome, admitted: database.poolStats().admitted! - admitted };
    };
    /** Both connections of a pool of two are taken (by statements that outlast the deadline under test). */
    const poolTaken = () => expect.poll(() => database.poolStats().inUse, { timeout: 20_000, interval: 10 }).toBe(2);
    /**
     * The outage becomes known (by the pool's own failures or its probe); statements are then refused at once: none
     * is let through to the database, no connection is opened (how fast, pnpm chaos measures). Once the database is
     * back the pool turns available on a probe that succeeded, and the first statement after that succeeds, with
     * no restart. That a probe comes within PROBE_INTERVAL of the database's return is proved in restart.test.ts.
     */
    async function outageKnownThenRecovery(): Promise<void> {
      await expect.poll(() => database.health.available, { timeout: 20_000, interval: 20 }).toBe(false);
      for (let i = 0; i < 3; i++) {
        const refused = await counted(() => database.db.execute(sql`select 1`));
        expect(causeOf(refused.outcome)).toBeInstanceOf(DatabaseUnavailableError);
        expect(refused).toMatchObject({ admitted: 0 });
      }
      const back = new Promise<void>((resolve) => {
        const stop = database.health.onChange((available) => {
          if (!available) return;
          stop();
          resolve();
        });
      });
      await proxy.restore();
      await back;
      await database.db.execute(sql`select 1`);
    }
    /**
     * A statement answered on each connection of the pool (of `connections`): a connection answers in order, so a
     * statement still queued from before (one that missed its deadline and should have been dropped) would have run
     * by then.
     */
    async function afterAnythingQueued(connections = 2): Promise<void> {
      const answeredOn = new Set<number>();
      for (let i = 0; i < 50 && answeredOn.size < connections; i++) {
        // All at once: none can share another's connection while that one is busy.
        const answers = await Promise.all(
          Array.from({ length: connections }, () => 0).map(
            () => database.db.execute(sql`select pg_backend_pid() as pid, pg_sleep(0.05)`) as unknown as Promise<{ pid: number }[]>,
          ),
        );
        for (const [row] of answers) answeredOn.add(Number(row!.pid));
      }
      expect(answeredOn.size).toBe(connections);
    }
    /** Sessions of this database, other than the asking one, inside a transaction (pg_stat_activity is live). */
    const openTransactions = async (check: DatabaseHandle) => {
      const [row] = (await check.db.execute(
        sql`select count(*)::int as open from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null`,
      )) as unknown as { open: number }[];
      return row!.open;
    };
    const marks = async () => {
      const check = await createDatabase({ url: own.url, dataDir: '/nonexistent', poolSize: 2 });
      try {
        const rows = (await check.db.execute(sql`select id from marks order by id`)) as unknown as { id: string }[];
        return rows.map((row) => row.id);
      } finally {
        await check.close();
      }
    };

    it('connections refused or reset (database stopped): the outage is known at once, statements are refused at once, and once a probe sees it back the next statement succeeds', async () => {
      database = await open();
      await database.db.execute(sql`select 1`);
      await proxy.drop();
      const first = await timed(() => database.db.execute(sql`select 1`));
      expect(isDatabaseUnavailable(first.outcome)).toBe(true);
      expect(first.ms).toBeLessThan(DEADLINE_CEILING_MS);
      await outageKnownThenRecovery();
    });

    it('a black hole (packets get no answer): no statement outlives its deadline, the outage becomes known and later ones are refused at once; recovery needs no restart', async () => {
      database = await open();
      await database.db.execute(sql`select 1`);
      proxy.blackhole();
      const stuck = await Promise.all([1, 2, 3].map(() => timed(() => database.db.execute(sql`select 1`))));
      for (const { outcome, ms } of stuck) {
        expect(isDatabaseUnavailable(outcome)).toBe(true);
        expect(ms).toBeLessThan(DEADLINE_CEILING_MS);
      }
      await outageKnownThenRecovery();
    });

    it('one deadline per request covers the wait for a pooled connection and every statement; what missed it is never executed later', async () => {
      database = await open(2);
      const deadline = () => performance.now() + TIMEOUT_MS;
      // Both connections are busy for longer than the deadline: the third statement waits, then is given up.
      const busy = [1, 2].map(() =>
        withDatabaseDeadline(performance.now() + 10_000, () => database.db.execute(sql`select pg_sleep(2.5)`)).catch(() => undefined),
      );
      await poolTaken();
      const late = await timed(() =>
        withDatabaseDeadline(deadline(), () => database.db.execute(sql`insert into marks values ('queued-too-long')`)),
      );
      expect(causeOf(late.outcome)).toBeInstanceOf(DatabaseTimeoutError);
      expect(late.ms).toBeLessThan(DEADLINE_CEILING_MS);
      await Promise.all(busy);
      await afterAnythingQueued();
      expect(await marks()).not.toContain('queued-too-long');
      // A slow statement is not an outage: the probe answers, the database stays available.
      expect(database.health.available).toBe(true);
    });

    it("a request's own view of the database (until) carries its deadline without AsyncLocalStorage: pool wait and statements, transactions included", async () => {
      database = await open(2);
      const busy = [1, 2].map(() =>
        database
          .until(performance.now() + 10_000)
          .execute(sql`select pg_sleep(2.5)`)
          .catch(() => undefined),
      );
      await poolTaken();
      const view = database.until(performance.now() + TIMEOUT_MS);
      const late = await timed(() => view.transaction(async (tx) => tx.execute(sql`insert into marks values ('view-too-late')`)));
      expect(isDatabaseUnavailable(late.outcome)).toBe(true);
      expect(late.ms).toBeLessThan(DEADLINE_CEILING_MS);
      await Promise.all(busy);
      await afterAnythingQueued();
      expect(await marks()).not.toContain('view-too-late');
    });

    it('a transaction whose body would start after its deadline never runs its body: nothing is written after the request was answered', async () => {
      database = await open();
      await database.db.execute(sql`select 1`);
      proxy.blackhole();
      const attempt = await timed(() =>
        withDatabaseDeadline(performance.now() + 800, () =>
          database.db.transaction(async (tx) => {
            await tx.execute(sql`insert into marks values ('ghost')`);
          }),
        ),
      );
      expect(isDatabaseUnavailable(attempt.outcome)).toBe(true);
      expect(attempt.ms).toBeLessThan(DEADLINE_CEILING_MS);
      await proxy.restore(); // the held BEGIN now reaches the server: the body must not follow it
      // The events that settle it, not a wait: every connection of the pool has answered a statement since (a
      // connection answers in order, so a transaction on one of them has ended), and no session of this database is
      // inside a transaction any more (one the client gave up on included).
      await expect.poll(() => database.health.available, { timeout: 20_000, interval: 20 }).toBe(true);
      await afterAnythingQueued(4);
      const check = await createDatabase({ url: own.url, dataDir: '/nonexistent', poolSize: 2 });
      try {
        await expect.poll(() => openTransactions(check), { timeout: 20_000, interval: 20 }).toBe(0);
      } finally {
        await check.close();
      }
      expect(await marks()).not.toContain('ghost');
    });

    it('each connection asks the server to end abandoned transactions and to keep its connection alive', async () => {
      database = await open();
      const [settings] = (await database.db.execute(
        sql`select current_setting('idle_in_transaction_session_timeout') as idle, current_setting('tcp_keepalives_idle') as keepalive`,
      )) as unknown as Record<string, string>[];
      expect(settings).toEqual({ idle: '3s', keepalive: '10' });
    });
  },
);
