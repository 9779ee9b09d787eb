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
  'issue 13 point 1: bounded statements during database faults (PostgreSQL through a fault-injecting proxy)',
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
     * The outage becomes known within `knownWithinMs`; statements are then refused at once (a few ms in fact, see
     * pnpm chaos: the bound only tells it from waiting); after the database is back the first statement succeeds
     * within 2 s, without a restart.
     */
    async function outageKnownThenRecovery(knownWithinMs: number): Promise<void> {
      await expect.poll(() => database.health.available, { timeout: knownWithinMs, interval: 20 }).toBe(false);
      for (let i = 0; i < 3; i++) {
        const refused = await timed(() => database.db.execute(sql`select 1`));
        expect(causeOf(refused.outcome)).toBeInstanceOf(DatabaseUnavailableError);
        expect(refused.ms).toBeLessThan(500);
      }
      await proxy.restore();
      const back = performance.now();
      await expect
        .poll(
          () =>
            database.db.execute(sql`select 1`).then(
              () => true,
              () => false,
            ),
          { timeout: 2000, interval: 50 },
        )
        .toBe(true);
      expect(performance.now() - back).toBeLessThan(2000);
    }
    const marks = async () => {
      const check = await createDatabase({ url: own.url, dataDir: '/nonexistent', poolSize: 2 });
      try {
        const rows = (await check.db.execute(sql`select id from marks order by id`)) as unknown as { id: string }[];
        return rows.map((row) => row.id);
      } finally {
        await check.close();
      }
    };

    it('connections refused or reset (database stopped): the outage is known at once, statements are refused at once, and the first statement after it is back succeeds within 2 s', async () => {
      database = await open();
      await database.db.execute(sql`select 1`);
      await proxy.drop();
      const first = await timed(() => database.db.execute(sql`select 1`));
      expect(isDatabaseUnavailable(first.outcome)).toBe(true);
      expect(first.ms).toBeLessThan(TIMEOUT_MS + 500);
      await outageKnownThenRecovery(2000);
    });

    it('a black hole (packets get no answer): no statement outlives its deadline, the outage becomes known and later ones are refused at once; recovery needs no restart', async () => {
      database = await open();
      await database.db.execute(sql`select 1`);
      proxy.blackhole();
      const stuck = await Promise.all([1, 2, 3].map(() => timed(() => database.db.execute(sql`select 1`))));
      for (const { outcome, ms } of stuck) {
        expect(isDatabaseUnavailable(outcome)).toBe(true);
        expect(ms).toBeLessThan(TIMEOUT_MS + 500);
      }
      await outageKnownThenRecovery(3000);
    });

    it('one deadline per request covers the wait for a pooled connection and every statement; what missed it is never executed later', async () => {
      database = await open(2);
      const deadline = () => performance.now() + TIMEOUT_MS;
      // Both connections are busy for longer than the deadline: the third statement waits, then is given up.
      const busy = [1, 2].map(() =>
        withDatabaseDeadline(performance.now() + 10_000, () => database.db.execute(sql`select pg_sleep(2.5)`)).catch(() => undefined),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const late = await timed(() =>
        withDatabaseDeadline(deadline(), () => database.db.execute(sql`insert into marks values ('queued-too-long')`)),
      );
      expect(causeOf(late.outcome)).toBeInstanceOf(DatabaseTimeoutError);
      expect(late.ms).toBeLessThan(TIMEOUT_MS + 500);
      await Promise.all(busy);
      await new Promise((resolve) => setTimeout(resolve, 300));
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
      await new Promise((resolve) => setTimeout(resolve, 100));
      const view = database.until(performance.now() + TIMEOUT_MS);
      const late = await timed(() => view.transaction(async (tx) => tx.execute(sql`insert into marks values ('view-too-late')`)));
      expect(isDatabaseUnavailable(late.outcome)).toBe(true);
      expect(late.ms).toBeLessThan(TIMEOUT_MS + 500);
      await Promise.all(busy);
      await new Promise((resolve) => setTimeout(resolve, 300));
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
      expect(attempt.ms).toBeLessThan(1000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await proxy.restore(); // the held BEGIN now reaches the server: the body must not follow it
      await new Promise((resolve) => setTimeout(resolve, 1000));
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
