import { createDatabase, lockAuditChain, seedDemoData, type DatabaseHandle } from '@latchkey/db';
import { onPostgres, startTcpProxy, type TcpProxy } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, ofType } from './support/audit.js';
import { BrowserSession, freePort } from './support/browser-session.js';
import { outboxOf, tokenOf } from './support/outbox.js';
import { createOwnDatabase, databaseKind, startTestService, type TestService } from './support/service.js';

// docs/audit.md "When the database cannot be written": recording never makes a sign-in wait; what is lost is
// counted and told afterwards. The service reaches its own PostgreSQL database through a TCP proxy that can drop
// every connection (a stopped database).

/** Recording an event may add at most this to a sign-in's answers. */
const AUDIT_BUDGET_MS = 200;

if (databaseKind === 'pglite') {
  process.stdout.write(
    '[latchkey tests] audit outage test skipped: it needs PostgreSQL (DATABASE_URL); the embedded database has no network to fail\n',
  );
}

describe.runIf(onPostgres('the PostgreSQL-only tests'))('audit trail during a database outage (docs/audit.md)', () => {
  let proxy: TcpProxy;
  let own: { url: string; drop(): Promise<void> };
  let direct: DatabaseHandle;
  let service: TestService;
  let base: string;

  beforeAll(async () => {
    own = await createOwnDatabase(process.env['DATABASE_URL']!);
    const target = new URL(own.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const port = await freePort();
    base = `http://localhost:${port}`;
    service = await startTestService(
      { PORT: String(port), PUBLIC_URL: base, DATABASE_URL: proxy.routeUrl(own.url), DATABASE_TIMEOUT: '5s', METRICS_PORT: '0' },
      { outages: true },
    );
    await seedDemoData(service.database);
    // The test's own connection, not through the proxy: it outlives the outage.
    direct = await createDatabase({ url: own.url, dataDir: service.config.dataDir, poolSize: 2 });
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await direct?.close();
    await proxy?.close();
    await own?.drop();
  });

  /** A one-time-token sign-in as a browser does it; the time of each of its two requests. */
  async function signIn(): Promise<number[]> {
    const browser = new BrowserSession(base);
    const outbox = outboxOf(service.config.dataDir);
    const sent = outbox.count();
    let started = performance.now();
    expect((await browser.request('/ott/generate', { form: { username: 'alice@acme.test' } })).status).toBe(303);
    const generateMs = performance.now() - started;
    const token = tokenOf(await outbox.next(sent, 'alice@acme.test'));
    started = performance.now();
    const answer = await browser.request('/login/ott', { form: { token } });
    const consumeMs = performance.now() - started;
    expect(answer.location).toBe('/account');
    return [generateMs, consumeMs];
  }

  const droppedMetric = async () => {
    const text = await (await fetch(`${service.metricsUrl}/metrics`)).text();
    return Number(/^latchkey_audit_events_dropped_total (\d+)/m.exec(text)?.[1] ?? 'NaN');
  };

  it('audit queue: with the audit writer stuck in the database and then cut off, a sign-in is not delayed beyond 200 ms; the lost events are counted and recorded as one audit.dropped event once the database answers', async () => {
    // Warm up, then the sign-in's own time with the writer free.
    await signIn();
    const baseline = await signIn();
    expect(ofType(await auditRows(service), 'sign_in.succeeded')).toHaveLength(2);

    // The writer's next transaction waits for the chain's lock, held here: the database does not answer it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = direct.db.transaction(async (tx) => {
      await lockAuditChain(tx);
      locked();
      await held;
    });
    await lockTaken;
    const stuck = await signIn();
    for (const [index, ms] of stuck.entries())
      expect(ms, `request ${index + 1} of the sign-in`).toBeLessThan(baseline[index]! + AUDIT_BUDGET_MS);
    expect(await droppedMetric()).toBe(0);

    // The database goes away under the waiting writer: its events are lost, and counted.
    await proxy.drop();
    await expect.poll(droppedMetric, { timeout: 10_000, interval: 100 }).toBeGreaterThanOrEqual(2);
    release();
    await holder;
    await proxy.restore();
    const lost = await droppedMetric();

    // Once the database answers, one audit.dropped event tells how many went; the chain goes on.
    await expect
      .poll(async () => ofType(await auditRows(service), 'audit.dropped').map((row) => row.details), { timeout: 15_000, interval: 200 })
      .toEqual([{ count: lost }]);
    await signIn();
    const rows = await auditRows(service);
    expect(ofType(rows, 'sign_in.succeeded')).toHaveLength(3);
    expect(rows.map((row) => row.seq)).toEqual(rows.map((_, index) => index + 1));
  }, 90_000);
});
