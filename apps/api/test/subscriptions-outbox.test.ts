import { NO_AUDIT } from '@latchkey/auth';
import {
  createDatabase,
  documentEventsPurged,
  documents,
  nextDocumentEventSeq,
  seedDemoData,
  users,
  type DatabaseHandle,
} from '@latchkey/db';
import { onPostgres, startTcpProxy, testTempDir, type TcpProxy } from '@latchkey/db/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainRequest } from '../src/domain/request.js';
import { updateDocument } from '../src/domain/document-mutations.js';
import { createLoaderFactory } from '../src/domain/loaders.js';
import { loadSubject } from '../src/domain/subject.js';
import { createEventRecorder } from '../src/events/outbox.js';
import { createMemoryWake, createPostgresWake, type WakeChannel } from '../src/events/wake.js';
import { freePort } from './support/browser-session.js';
import { untilSubscriptionsOpen } from './support/metrics.js';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';
import { overSse, overWebSocket, sleep, sseClient, wsClient, type Received } from './support/subscriptions.js';

// The outbox table is the only record of an event; NOTIFY (or Redis) only wakes the instances.
// These tests need two sessions on one database at once, or several processes: PostgreSQL only.
//
// How soon an instance is back after an outage is the database layer's business (point 1): the waits below are
// generous on purpose, and what they check is that nothing is lost or duplicated, not how fast it arrives.
const RECOVERY_MS = 20_000;

const CHANGED = 'subscription { documentChanged(organization: "acme") { kind document { title } } }';
const kindsAndTitles = (received: Received) =>
  received.results.map(
    (result) => result.data?.documentChanged && [result.data.documentChanged.kind, result.data.documentChanged.document?.title],
  );

function openDatabase(url: string): Promise<DatabaseHandle> {
  return createDatabase({ url, dataDir: testTempDir('outbox-test'), poolSize: 2 });
}

/** A domain request acting as `email` on `database`, recording events with `wake` (as the CLI does). */
async function actingAs(database: DatabaseHandle, email: string, wake: WakeChannel, db = database.db): Promise<DomainRequest> {
  const [user] = await database.db.select({ id: users.id }).from(users).where(eq(users.email, email));
  return {
    db,
    subject: await loadSubject(database.db, { subject: user!.id }, null),
    loaders: createLoaderFactory()({}, db),
    handler: 'test',
    audit: NO_AUDIT,
    events: createEventRecorder(wake),
  };
}

/**
 * Creates a document over HTTP, trying again while the service refuses (an outage), each refusal told to
 * `onRefused`; a title taken means an earlier try committed.
 */
async function createRetrying(graphqlUrl: string, token: string, title: string, onRefused = () => {}): Promise<number> {
  const deadline = Date.now() + RECOVERY_MS;
  for (let attempts = 1; ; attempts++) {
    const res = await postGraphQL(
      graphqlUrl,
      { query: `mutation { createDocument(input: { organization: "acme", title: "${title}" }) { document { id } userErrors { code } } }` },
      { token },
    ).catch(() => undefined);
    const payload = res?.json?.data?.createDocument;
    if (payload && (payload.document || payload.userErrors?.[0]?.code === 'TITLE_TAKEN')) return attempts;
    if (Date.now() > deadline) throw new Error(`could not create "${title}"`);
    onRefused();
    await sleep(100); // the pace of retries, not a wait for an event
  }
}

describe.runIf(onPostgres('the PostgreSQL-only tests'))('on one server: sequence numbers become visible at commit', () => {
  let service: TestService;
  let database: DatabaseHandle;
  let wake: WakeChannel;
  beforeAll(async () => {
    service = await startTestService();
    await seedDemoData(service.database);
    database = await openDatabase(service.config.database.url!);
    wake = await createPostgresWake(database, { listen: false });
  });
  afterAll(async () => {
    await wake?.close();
    await database?.close();
    await service?.stop();
  });

  it('two changes committed out of allocation order both reach a subscriber, in sequence order, once each; nothing passes the change still open', async () => {
    const [alice] = await service.database.db.select({ id: users.id }).from(users).where(eq(users.email, 'alice@acme.test'));
    const token = await service.token(alice!.id);
    const before = service.subscriptions.size();
    const received = overSse(sseClient(service.graphqlUrl, token), { query: CHANGED });
    await expect.poll(() => service.subscriptions.size(), { timeout: 30_000, interval: 10 }).toBeGreaterThan(before);
    const [held] = await database.db.select({ id: documents.id }).from(documents).where(eq(documents.title, 'Quarterly plan'));

    // The first change draws its sequence number and stays open (the real domain service, in an outer transaction).
    let release!: () => void;
    let drew!: () => void;
    const releasing = new Promise<void>((resolve) => (release = resolve));
    const drawn = new Promise<void>((resolve) => (drew = resolve));
    const first = database.db.transaction(async (tx) => {
      const result = await updateDocument(await actingAs(database, 'alice@acme.test', wake, tx), { id: held!.id, title: 'Held open' });
      expect(result.userErrors).toEqual([]);
      drew();
      await releasing;
    });
    await drawn;
    const start = service.outbox.position();
    // The second one, through the API, draws a later number and commits first.
    const second = await postGraphQL(
      service.graphqlUrl,
      { query: 'mutation { createDocument(input: { organization: "acme", title: "Committed second" }) { document { id } } }' },
      { token },
    );
    expect(second.json.data.createDocument.document.id).toBeTruthy();
    // The reader has read twice since that commit (the first of those may have begun before it): it saw the second
    // row and stayed at the open number, where a reader that skipped it would have moved past both.
    const reads = service.outbox.reads();
    await expect.poll(() => service.outbox.reads(), { timeout: RECOVERY_MS, interval: 10 }).toBeGreaterThanOrEqual(reads + 2);
    expect(service.outbox.position()).toBe(start);
    expect(received.results).toEqual([]);

    release();
    await first;
    // A third change, delivered after both: once it is in, a second delivery of either would have come before it.
    await createRetrying(service.graphqlUrl, token, 'Committed third');
    await received.waitFor(3);
    expect(kindsAndTitles(received)).toEqual([
      ['UPDATED', 'Held open'],
      ['CREATED', 'Committed second'],
      ['CREATED', 'Committed third'],
    ]);
    received.dispose();
  });
});

/**
 * Two api processes on one database, and a proxy in front of the database server that `env` may route them
 * through; B (the second) is the subscriber's. B's metrics listener tells how many subscriptions it holds.
 */
function twoProcesses(env: (databaseUrl: string, index: number, proxy: TcpProxy) => Record<string, string>) {
  const state = {} as { processes: ServiceProcesses; alice: string; proxy: TcpProxy; metricsOfB: string };
  beforeAll(async () => {
    const server = new URL(process.env['DATABASE_URL']!);
    state.proxy = await startTcpProxy(server.hostname, Number(server.port || 5432));
    const metricsPort = await freePort();
    state.metricsOfB = `http://127.0.0.1:${metricsPort}`;
    state.processes = await startServiceProcesses(2, (databaseUrl, index) => ({
      ...env(databaseUrl, index, state.proxy),
      ...(index === 1 ? { METRICS_PORT: String(metricsPort) } : {}),
    }));
    const database = await openDatabase(state.processes.databaseUrl);
    try {
      const [alice] = await database.db.select({ id: users.id }).from(users).where(eq(users.email, 'alice@acme.test'));
      state.alice = await state.processes.token(alice!.id);
    } finally {
      await database.close();
    }
  }, 60_000);
  afterAll(async () => {
    await state.processes?.stop();
    await state.proxy?.close();
  });
  return state;
}

/**
 * Subscribes on B over WebSocket and SSE, and waits until B holds both (events from then on are theirs). Each
 * test ends its subscriptions: B holds none of an earlier test's once it holds none at all.
 */
async function subscribeBoth(state: ReturnType<typeof twoProcesses>) {
  const base = state.processes.urls[1]!;
  await untilSubscriptionsOpen(state.metricsOfB, 0, RECOVERY_MS);
  const ws = wsClient(`${base}/graphql`, state.alice);
  const overWs = overWebSocket(ws, { query: CHANGED });
  const overHttp = overSse(sseClient(`${base}/graphql`, state.alice), { query: CHANGED });
  await untilSubscriptionsOpen(state.metricsOfB, 2, RECOVERY_MS);
  return {
    all: [overWs, overHttp],
    async dispose() {
      overWs.dispose();
      overHttp.dispose();
      await ws.dispose();
    },
  };
}

describe.runIf(onPostgres('the PostgreSQL-only tests'))(
  'across a database restart: two api processes, one PostgreSQL behind a proxy',
  () => {
    const state = twoProcesses((databaseUrl, _index, proxy) => ({ DATABASE_URL: proxy.routeUrl(databaseUrl) }));

    it(
      'documents changed on A while the database restarts and right after it (with retries) all reach the subscribers on B, once each and in order',
      async () => {
        const [a] = state.processes.urls as [string, string];
        const subscribers = await subscribeBoth(state);
        await state.proxy.drop();
        const titles = Array.from({ length: 12 }, (_, i) => `After the restart ${i}`);
        let refused = 0;
        const creating = (async () => {
          for (const title of titles) await createRetrying(`${a}/graphql`, state.alice, title, () => refused++);
        })();
        // The database is back once A has refused a change for want of it: some are made during the outage, the
        // rest right after it.
        await expect.poll(() => refused, { timeout: RECOVERY_MS, interval: 10 }).toBeGreaterThan(0);
        await state.proxy.restore();
        await creating;
        // A change after them all, delivered after them: once it is in, a second delivery of any would have come first.
        await createRetrying(`${a}/graphql`, state.alice, 'After them all');
        for (const received of subscribers.all) {
          await received.waitFor(titles.length + 1, RECOVERY_MS);
          expect(kindsAndTitles(received)).toEqual([...titles, 'After them all'].map((title) => ['CREATED', title]));
          expect(received.completed).toBe(false);
        }
        await subscribers.dispose();
      },
      2 * RECOVERY_MS,
    );

    it("a change whose wake-up never comes (a writer that sends none) still reaches B's subscribers, by its poll", async () => {
      const subscribers = await subscribeBoth(state);
      const database = await openDatabase(state.processes.databaseUrl);
      try {
        const [document] = await database.db.select({ id: documents.id }).from(documents).where(eq(documents.title, 'After the restart 0'));
        const result = await updateDocument(await actingAs(database, 'alice@acme.test', createMemoryWake()), {
          id: document!.id,
          title: 'Never announced',
        });
        expect(result.userErrors).toEqual([]);
      } finally {
        await database.close();
      }
      for (const received of subscribers.all) {
        await received.waitFor(1, 5_000);
        expect(kindsAndTitles(received)).toEqual([['UPDATED', 'Never announced']]);
      }
      await subscribers.dispose();
    });
  },
);

describe.runIf(onPostgres('the PostgreSQL-only tests'))(
  'a gap that cannot be bridged (B cut off while A writes and a short EVENT_RETENTION purges)',
  () => {
    const state = twoProcesses((databaseUrl, index, proxy) => ({
      EVENT_RETENTION: '1s',
      ...(index === 1 ? { DATABASE_URL: proxy.routeUrl(databaseUrl) } : {}),
    }));

    it(
      "B's subscribers get one last result with SUBSCRIPTION_INTERRUPTED and their streams complete; a new subscription afterwards works",
      async () => {
        const [a] = state.processes.urls as [string, string];
        const subscribers = await subscribeBoth(state);
        await state.proxy.drop();
        await createRetrying(`${a}/graphql`, state.alice, 'Written while B was cut off');
        // Once the change is older than EVENT_RETENTION, A purges it (every 250 ms) and raises the watermark past it.
        const database = await openDatabase(state.processes.databaseUrl);
        try {
          const written = (await nextDocumentEventSeq(database.db)) - 1;
          const watermark = async () => (await database.db.select().from(documentEventsPurged))[0]?.throughSeq ?? 0;
          await expect.poll(watermark, { timeout: RECOVERY_MS, interval: 50 }).toBeGreaterThanOrEqual(written);
        } finally {
          await database.close();
        }
        await state.proxy.restore();
        for (const received of subscribers.all) {
          await received.ended(RECOVERY_MS);
          expect(received.results).toHaveLength(1);
          expect(received.results[0]!.errors).toMatchObject([{ extensions: { code: 'SUBSCRIPTION_INTERRUPTED' } }]);
          expect(received.results[0]!.errors![0]!.message).toMatch(/not replayed/);
          expect(received.completed).toBe(true);
        }
        await subscribers.dispose();

        const again = await subscribeBoth(state);
        await createRetrying(`${a}/graphql`, state.alice, 'After the interruption');
        for (const received of again.all) {
          await received.waitFor(1, 5_000);
          expect(kindsAndTitles(received)).toEqual([['CREATED', 'After the interruption']]);
        }
        await again.dispose();
      },
      2 * RECOVERY_MS,
    );
  },
);
