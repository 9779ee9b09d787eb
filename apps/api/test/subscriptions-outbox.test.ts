import { NO_AUDIT } from '@latchkey/auth';
import { createDatabase, documents, seedDemoData, users, type DatabaseHandle } from '@latchkey/db';
import { onPostgres, startTcpProxy, testTempDir, type TcpProxy } from '@latchkey/db/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainRequest } from '../src/domain/access.js';
import { updateDocument } from '../src/domain/document-mutations.js';
import { createLoaderFactory } from '../src/domain/loaders.js';
import { loadSubject } from '../src/domain/subjects.js';
import { createEventRecorder } from '../src/events/outbox.js';
import { createMemoryWake, createPostgresWake, type WakeChannel } from '../src/events/wake.js';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';
import { overSse, overWebSocket, sleep, sseClient, wsClient, type Received } from './support/subscriptions.js';

// Issue 13 point 2: the outbox table is the only record of an event; NOTIFY (or Redis) only wakes the instances.
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
    subject: await loadSubject(database.db, user!.id),
    loaders: createLoaderFactory()({}, db),
    handler: 'test',
    audit: NO_AUDIT,
    events: createEventRecorder(wake),
  };
}

/** Creates a document over HTTP, trying again while the service refuses (an outage); a title taken means an earlier try committed. */
async function createRetrying(graphqlUrl: string, token: string, title: string, deadline = Date.now() + RECOVERY_MS): Promise<number> {
  for (let attempts = 1; ; attempts++) {
    const res = await postGraphQL(
      graphqlUrl,
      { query: `mutation { createDocument(input: { organization: "acme", title: "${title}" }) { document { id } userErrors { code } } }` },
      { token },
    ).catch(() => undefined);
    const payload = res?.json?.data?.createDocument;
    if (payload && (payload.document || payload.userErrors?.[0]?.code === 'TITLE_TAKEN')) return attempts;
    if (Date.now() > deadline) throw new Error(`could not create "${title}"`);
    await sleep(100);
  }
}

describe.runIf(onPostgres('the PostgreSQL-only tests'))('issue 13 point 2 on one server: sequence numbers become visible at commit', () => {
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
    // The second one, through the API, draws a later number and commits first.
    const second = await postGraphQL(
      service.graphqlUrl,
      { query: 'mutation { createDocument(input: { organization: "acme", title: "Committed second" }) { document { id } } }' },
      { token },
    );
    expect(second.json.data.createDocument.document.id).toBeTruthy();
    await sleep(1_500); // more than a poll: a reader that skipped the open number would have delivered by now
    expect(received.results).toEqual([]);

    release();
    await first;
    await received.waitFor(2);
    await sleep(500);
    expect(kindsAndTitles(received)).toEqual([
      ['UPDATED', 'Held open'],
      ['CREATED', 'Committed second'],
    ]);
    received.dispose();
  });
});

/**
 * Two api processes on one database, and a proxy in front of the database server that `env` may route them
 * through; B (the second) is the subscriber's.
 */
function twoProcesses(env: (databaseUrl: string, index: number, proxy: TcpProxy) => Record<string, string>) {
  const state = {} as { processes: ServiceProcesses; alice: string; proxy: TcpProxy };
  beforeAll(async () => {
    const server = new URL(process.env['DATABASE_URL']!);
    state.proxy = await startTcpProxy(server.hostname, Number(server.port || 5432));
    state.processes = await startServiceProcesses(2, (databaseUrl, index) => env(databaseUrl, index, state.proxy));
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

/** Subscribes on `base` over WebSocket and SSE, and waits until the server holds both. */
async function subscribeBoth(base: string, token: string) {
  const ws = wsClient(`${base}/graphql`, token);
  const overWs = overWebSocket(ws, { query: CHANGED });
  const overHttp = overSse(sseClient(`${base}/graphql`, token), { query: CHANGED });
  // The servers are other processes: give the subscriptions a moment to open (an event before that is not theirs).
  await sleep(1_000);
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
  'issue 13 point 2 across a database restart: two api processes, one PostgreSQL behind a proxy',
  () => {
    const state = twoProcesses((databaseUrl, _index, proxy) => ({ DATABASE_URL: proxy.routeUrl(databaseUrl) }));

    it(
      'documents changed on A while the database restarts and right after it (with retries) all reach the subscribers on B, once each and in order',
      async () => {
        const [a, b] = state.processes.urls as [string, string];
        const subscribers = await subscribeBoth(b, state.alice);
        await state.proxy.drop();
        const titles = Array.from({ length: 12 }, (_, i) => `After the restart ${i}`);
        const creating = (async () => {
          for (const title of titles) await createRetrying(`${a}/graphql`, state.alice, title);
        })();
        await sleep(2_000);
        await state.proxy.restore();
        await creating;
        for (const received of subscribers.all) {
          await received.waitFor(titles.length, RECOVERY_MS);
          await sleep(300);
          expect(kindsAndTitles(received)).toEqual(titles.map((title) => ['CREATED', title]));
          expect(received.completed).toBe(false);
        }
        await subscribers.dispose();
      },
      2 * RECOVERY_MS,
    );

    it("a change whose wake-up never comes (a writer that sends none) still reaches B's subscribers, by its poll", async () => {
      const [, b] = state.processes.urls as [string, string];
      const subscribers = await subscribeBoth(b, state.alice);
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
  'issue 13 point 2: a gap that cannot be bridged (B cut off while A writes and a short EVENT_RETENTION purges)',
  () => {
    const state = twoProcesses((databaseUrl, index, proxy) => ({
      EVENT_RETENTION: '1s',
      ...(index === 1 ? { DATABASE_URL: proxy.routeUrl(databaseUrl) } : {}),
    }));

    it(
      "B's subscribers get one last result with SUBSCRIPTION_INTERRUPTED and their streams complete; a new subscription afterwards works",
      async () => {
        const [a, b] = state.processes.urls as [string, string];
        const subscribers = await subscribeBoth(b, state.alice);
        await state.proxy.drop();
        await createRetrying(`${a}/graphql`, state.alice, 'Written while B was cut off');
        await sleep(2_500); // older than EVENT_RETENTION, and purged by A
        await state.proxy.restore();
        for (const received of subscribers.all) {
          await received.ended(RECOVERY_MS);
          expect(received.results).toHaveLength(1);
          expect(received.results[0]!.errors).toMatchObject([{ extensions: { code: 'SUBSCRIPTION_INTERRUPTED' } }]);
          expect(received.results[0]!.errors![0]!.message).toMatch(/not replayed/);
          expect(received.completed).toBe(true);
        }
        await subscribers.dispose();

        const again = await subscribeBoth(b, state.alice);
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
