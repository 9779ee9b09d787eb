import {
  createDatabase,
  documentEvents,
  documentEventsPurged,
  runMigrations,
  type Database,
  type DatabaseHandle,
  type DocumentRow,
} from '@latchkey/db';
import { createOwnDatabase, onPostgres, openOwnDatabase, startTcpProxy } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import type { DocumentEventRecorder } from '../domain/document-events.js';
import { createEventRecorder } from './outbox.js';
import { startOutboxReader, type OutboxReader, type OutboxReaderOptions } from './outbox-reader.js';
import { createSubscriptionHub } from './subscription-hub.js';
import { parseDocumentEvent, type DocumentEvent } from './types.js';
import { createMemoryWake, createPostgresWake, createRedisWake, type WakeChannel } from './wake.js';

const adminUrl = process.env['DATABASE_URL'];
const redisUrl = process.env['TEST_REDIS_URL'];
const silent = createLogger('silent');

let n = 0;
/** The fields of a document row the recorder reads. */
const doc = (organizationId = 'acme'): DocumentRow =>
  ({ id: `doc-${++n}`, organizationId, ownerId: 'owner', status: 'DRAFT', embargoUntil: null }) as unknown as DocumentRow;

function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const poll = () => {
      if (check()) return resolve();
      if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(poll, 10);
    };
    poll();
  });
}
/**
 * Resolves once `reader` has finished a read that started after this call: of the reads finished from now on,
 * the first may have been under way already (its snapshot older), the second was not. Waking it makes that soon.
 */
async function aReadSinceNow(reader: OutboxReader): Promise<void> {
  const finished = reader.reads();
  reader.wake();
  await until(() => reader.reads() >= finished + 2, 'a read after this moment');
}

/** A reader with everything it hands out collected. */
async function reading(database: DatabaseHandle, options: Partial<OutboxReaderOptions> = {}) {
  const events: DocumentEvent[] = [];
  let interruptions = 0;
  const lags: number[] = [];
  const reader = await startOutboxReader({
    database,
    wake: createMemoryWake(),
    retentionSeconds: 600,
    logger: silent,
    onDelivered: (lag) => lags.push(lag),
    ...options,
  });
  reader.subscribe(
    (event) => events.push(event),
    () => interruptions++,
  );
  return { reader, events, lags, interruptions: () => interruptions, ids: () => events.map((event) => event.documentId) };
}

/** Records one change in a transaction of its own, as the domain services do, then wakes. */
async function change(db: Database, recorder: DocumentEventRecorder, document = doc()): Promise<string> {
  await db.transaction((tx) => recorder.record(tx, 'UPDATED', document));
  recorder.committed();
  return document.id;
}

describe('the event outbox on one database', () => {
  let database: DatabaseHandle;
  let close: () => Promise<void>;
  const readers: OutboxReader[] = [];
  beforeAll(async () => {
    ({ database, close } = await openOwnDatabase('event_outbox'));
  });
  afterAll(async () => {
    for (const reader of readers) await reader.close();
    await close?.();
  });

  it('a reader starts after the newest row (no replay); later changes arrive once each, in sequence order, with their time and delivery lag', async () => {
    const writer = createEventRecorder(createMemoryWake());
    const before = await change(database.db, writer);
    const one = await reading(database, { pollIntervalMs: 50 });
    readers.push(one.reader);
    const after = [await change(database.db, writer), await change(database.db, writer), await change(database.db, writer)];
    // A later change, delivered in sequence order after the three: once it is in, a second delivery of any of them
    // would have come before it.
    const marker = await change(database.db, writer);
    await until(() => one.events.length >= 4, 'four events');
    expect(one.ids()).toEqual([...after, marker]);
    expect(one.ids()).not.toContain(before);
    expect(one.events.map((event) => Number(event.id))).toEqual([...one.events.map((event) => Number(event.id))].sort((a, b) => a - b));
    expect(Math.abs(one.events[0]!.at - Date.now())).toBeLessThan(60_000);
    expect(one.lags).toHaveLength(4);
    for (const lag of one.lags) expect(lag).toBeGreaterThanOrEqual(0);
  });

  it('a rolled-back change leaves a gap in the sequence, which is skipped once its transaction has ended', async () => {
    const one = await reading(database, { pollIntervalMs: 50 });
    readers.push(one.reader);
    const writer = createEventRecorder(createMemoryWake(), one.reader.wake);
    const start = one.reader.position();
    await expect(
      database.db.transaction(async (tx) => {
        await writer.record(tx, 'UPDATED', doc());
        throw new Error('the change fails after its event was recorded');
      }),
    ).rejects.toThrow(/the change fails/);
    const kept = await change(database.db, writer);
    await until(() => one.events.length >= 1, 'the committed event');
    expect(one.ids()).toEqual([kept]);
    expect(one.reader.position()).toBe(start + 2);
  });

  it('a malformed row is logged and skipped; the rows after it are delivered', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('warn', {
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const one = await reading(database, { pollIntervalMs: 50, logger });
    readers.push(one.reader);
    await database.db.insert(documentEvents).values({ event: { kind: 'EXPLODED' } });
    const good = await change(database.db, createEventRecorder(createMemoryWake(), one.reader.wake));
    await until(() => one.events.length >= 1, 'the good event');
    expect(one.ids()).toEqual([good]);
    expect(lines.map((line) => line['msg'])).toEqual(['event outbox: ignored a malformed row']);
  });

  it('events purged before an instance read them cannot be bridged: its subscribers are interrupted once, and later events reach new subscribers', async () => {
    // `late` is never woken and polls rarely: it stands for an instance cut off while rows expire.
    const late = await reading(database, { pollIntervalMs: 60_000, retentionSeconds: 1, purgeIntervalMs: 100 });
    readers.push(late.reader);
    const hub = createSubscriptionHub({ source: late.reader });
    const subscriber = hub.open('u1', 'acme')!;
    const other = hub.open('u2', 'globex')!;
    const writer = createEventRecorder(createMemoryWake());
    await change(database.db, writer);
    await change(database.db, writer);
    const written = Math.max(...(await database.db.select({ seq: documentEvents.seq }).from(documentEvents)).map((row) => row.seq));
    // Once they are older than the retention (1 s), a purge (every 100 ms) raises the watermark past both (past the
    // reader's position alone is not enough: older tests' rows may be purged first).
    const watermark = async () => (await database.db.select().from(documentEventsPurged))[0]?.throughSeq ?? 0;
    await expect.poll(watermark, { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(written);
    late.reader.wake();
    expect(await subscriber.next()).toEqual({ end: 'interrupted' });
    expect(await other.next()).toEqual({ end: 'interrupted' });
    expect(late.interruptions()).toBe(1);
    expect(late.events).toEqual([]);
    const again = hub.open('u1', 'acme')!;
    const fresh = await change(database.db, createEventRecorder(createMemoryWake(), late.reader.wake));
    const delivery = await again.next();
    expect('event' in delivery && delivery.event.documentId).toBe(fresh);
    expect(late.interruptions()).toBe(1);
    await hub.close();
  });

  it('a Redis URL that cannot be reached fails at start-up, not at the first wake-up', async () => {
    const errors: Error[] = [];
    await expect(createRedisWake('redis://127.0.0.1:1', { listen: true, onError: (error) => errors.push(error) })).rejects.toThrow();
    expect(errors.length).toBeGreaterThan(0);
  });

  it.each([
    ['not JSON', 'x'],
    [
      'an unknown kind',
      JSON.stringify({
        id: '1',
        kind: 'EXPLODED',
        documentId: 'd',
        organizationId: 'o',
        ownerId: 'u',
        status: 'DRAFT',
        embargoUntil: null,
        at: 1,
      }),
    ],
    [
      'a missing id',
      JSON.stringify({ kind: 'CREATED', documentId: 'd', organizationId: 'o', ownerId: 'u', status: 'DRAFT', embargoUntil: null, at: 1 }),
    ],
    [
      'a wrong date type',
      JSON.stringify({
        id: '1',
        kind: 'CREATED',
        documentId: 'd',
        organizationId: 'o',
        ownerId: 'u',
        status: 'DRAFT',
        embargoUntil: 5,
        at: 1,
      }),
    ],
    [
      'an over-long id',
      JSON.stringify({
        id: '1',
        kind: 'CREATED',
        documentId: 'x'.repeat(200),
        organizationId: 'o',
        ownerId: 'u',
        status: 'DRAFT',
        embargoUntil: null,
        at: 1,
      }),
    ],
  ])('parseDocumentEvent refuses %s', (_name, text) => {
    expect(parseDocumentEvent(text)).toBeUndefined();
  });
});

describe.runIf(onPostgres('the PostgreSQL-only tests'))('the event outbox across connections and instances of PostgreSQL', () => {
  let url: string;
  let drop: () => Promise<void>;
  const handles: DatabaseHandle[] = [];
  const closing: (() => Promise<unknown>)[] = [];
  const open = async (at = url) => {
    // A handle on a PostgreSQL URL never touches its data directory (that is PGlite's): none is made for it.
    const handle = await createDatabase({ url: at, dataDir: '/nonexistent', poolSize: 4 });
    handles.push(handle);
    return handle;
  };
  beforeAll(async () => {
    ({ url, drop } = await createOwnDatabase(adminUrl!, 'event_outbox_pg'));
    await runMigrations(await open());
  });
  afterAll(async () => {
    for (const release of closing.reverse()) await release();
    for (const handle of handles) await handle.close();
    await drop?.();
  });

  it('two changes committed out of allocation order: nothing passes the open one, then both arrive in sequence order, once each', async () => {
    const [first, second] = [await open(), await open()];
    const one = await reading(first, { pollIntervalMs: 50 });
    closing.push(() => one.reader.close());
    const writer = createEventRecorder(createMemoryWake(), one.reader.wake);
    let commitFirst!: () => void;
    let drawn!: () => void;
    const firstDrew = new Promise<void>((resolve) => (drawn = resolve));
    const held = new Promise<void>((resolve) => (commitFirst = resolve));
    const early = doc();
    const firstChange = first.db.transaction(async (tx) => {
      await writer.record(tx, 'UPDATED', early);
      drawn();
      await held;
    });
    await firstDrew;
    const start = one.reader.position();
    const late = await change(second.db, writer);
    // The second commit is visible and wakes the reader; the first number is missing but its transaction is open.
    // A read since that commit has seen the second row: the reader stays at the open number.
    await aReadSinceNow(one.reader);
    expect(one.reader.position()).toBe(start);
    expect(one.events).toEqual([]);
    commitFirst();
    await firstChange;
    writer.committed();
    // A third change, delivered after both: once it is in, a second delivery of either would have come before it.
    const marker = await change(second.db, writer);
    await until(() => one.events.length >= 3, 'the three events');
    expect(one.ids()).toEqual([early.id, late, marker]);
  });

  it("a read that fails is tried again from the same position: changes made while the reader's database was unreachable arrive when it is back; one warning per outage", async () => {
    const proxy = await startTcpProxy(new URL(url).hostname, Number(new URL(url).port || 5432));
    closing.push(() => proxy.close());
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('info', {
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const cutOff = await open(proxy.routeUrl(url));
    const one = await reading(cutOff, { pollIntervalMs: 50, logger });
    closing.push(() => one.reader.close());
    const writer = createEventRecorder(createMemoryWake());
    const before = await change((await open()).db, writer);
    await until(() => one.events.length >= 1, 'the first event');
    await proxy.drop();
    const during: string[] = [];
    const writing = await open();
    for (let i = 0; i < 5; i++) during.push(await change(writing.db, writer));
    // The outage is known (its warning logged), and the reader has failed again since, backing off: still one warning.
    const warned = () => lines.some((line) => line['msg'] === 'event outbox: reading failed; retrying until the database answers');
    await until(warned, 'the warning of the outage');
    const failedSoFar = one.reader.reads();
    await until(() => one.reader.reads() >= failedSoFar + 3, 'three more failed reads');
    await proxy.restore();
    await until(() => one.events.length >= 6, 'the events written during the outage');
    expect(one.ids()).toEqual([before, ...during]);
    expect(lines.filter((line) => line['msg'] === 'event outbox: reading failed; retrying until the database answers')).toHaveLength(1);
    expect(lines.filter((line) => line['msg'] === 'event outbox: reading again')).toHaveLength(1);
  });

  const wakes: [string, (database: DatabaseHandle) => Promise<WakeChannel>][] = [
    ["LISTEN/NOTIFY (sent in the writer's transaction)", (database) => createPostgresWake(database, { listen: true })],
    ...(redisUrl
      ? [
          ['Redis pub/sub (sent after the commit)', () => createRedisWake(redisUrl, { listen: true, onError: () => undefined })] as [
            string,
            (database: DatabaseHandle) => Promise<WakeChannel>,
          ],
        ]
      : []),
  ];
  it.each(wakes)("%s: another instance's commit wakes the reader at once (its poll is a minute away)", async (_name, channel) => {
    const [readerDb, writerDb] = [await open(), await open()];
    const readerWake = await channel(readerDb);
    const writerWake = await channel(writerDb);
    closing.push(
      () => readerWake.close(),
      () => writerWake.close(),
    );
    const one = await reading(readerDb, { pollIntervalMs: 60_000, wake: readerWake });
    closing.push(() => one.reader.close());
    const sent = await change(writerDb.db, createEventRecorder(writerWake));
    await until(() => one.events.length >= 1, 'the woken read', 5_000);
    expect(one.ids()).toEqual([sent]);
  });

  it('a lost wake-up costs at most one poll: a change whose NOTIFY never comes is delivered all the same', async () => {
    const readerDb = await open();
    const listening = await createPostgresWake(readerDb, { listen: true });
    closing.push(() => listening.close());
    const one = await reading(readerDb, { pollIntervalMs: 300, wake: listening });
    closing.push(() => one.reader.close());
    // A writer that sends no wake-up at all (as if its NOTIFY were lost while the listener reconnected).
    const silentWriter = createEventRecorder(createMemoryWake());
    const sent = await change((await open()).db, silentWriter);
    await until(() => one.events.length >= 1, 'the polled read', 5_000);
    expect(one.ids()).toEqual([sent]);
  });
});
