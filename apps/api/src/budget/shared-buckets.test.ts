import { randomBytes } from 'node:crypto';
import { apiBudgets, createDatabase, deleteFullBudgets, type DatabaseHandle } from '@latchkey/db';
import { openOwnDatabase, redisForTests, startTcpProxy, type TcpProxy } from '@latchkey/db/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BucketSize } from '../config/budget.js';
import { createPostgresBuckets, longestRefillMs } from './postgres-buckets.js';
import { BUDGET_KEY_PREFIX, openRedisBuckets } from './redis-buckets.js';
import type { SharedBuckets } from './shared-buckets.js';

// One specification, run against each shared store on the real service: PostgreSQL (or the embedded PGlite when
// DATABASE_URL is unset) and Redis (TEST_REDIS_URL).

/** Refills one thousandth of a point in 1,000 s: nothing refills during a test, so levels are exact. */
const STILL: BucketSize = { capacity: 50, restorePerSecond: 1e-6 };
/** Refills its whole capacity in 50 ms. */
const FAST: BucketSize = { capacity: 50, restorePerSecond: 1000 };

/** Every key of this run starts with this (Redis keeps them until they expire; the teardown deletes them). */
const RUN = `test-${randomBytes(6).toString('hex')}`;
let keys = 0;
const newKey = () => `${RUN}-${++keys}`;

interface StoreFixture {
  setup(): Promise<void>;
  /** Another client of the store, with connections of its own where the store has connections. */
  open(): Promise<SharedBuckets>;
  teardown(): Promise<void>;
}

function postgresFixture(): StoreFixture {
  let own: Awaited<ReturnType<typeof openOwnDatabase>>;
  const handles: DatabaseHandle[] = [];
  return {
    setup: async () => {
      own = await openOwnDatabase('shared_buckets');
    },
    async open() {
      if (!own.url) return createPostgresBuckets(own.database);
      // A handle on a PostgreSQL URL never touches its data directory (that is PGlite's): none is made for it.
      const handle = await createDatabase({ url: own.url, dataDir: '/nonexistent', poolSize: 4 });
      handles.push(handle);
      return createPostgresBuckets(handle);
    },
    async teardown() {
      for (const handle of handles) await handle.close();
      await own?.close();
    },
  };
}

function redisFixture(url: string): StoreFixture {
  const opened: SharedBuckets[] = [];
  return {
    setup: async () => undefined,
    async open() {
      const buckets = await openRedisBuckets(url, { timeoutMs: 5000 });
      opened.push(buckets);
      return buckets;
    },
    async teardown() {
      for (const buckets of opened) await buckets.close();
      const client = new Redis(url);
      try {
        const left = await client.keys(`${BUDGET_KEY_PREFIX}${RUN}-*`);
        if (left.length > 0) await client.del(...left);
      } finally {
        await client.quit();
      }
    },
  };
}

const redisUrl = redisForTests('the Redis shared-bucket tests');

/** Resolves once `check` holds of what `read` answers, polling; fails after `timeoutMs`. */
async function until<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, timeoutMs = 5000): Promise<T> {
  const started = performance.now();
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (performance.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what} (last: ${String(value)})`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe(`shared buckets (${process.env['DATABASE_URL'] ? 'PostgreSQL' : 'PGlite'})`, () => specification(postgresFixture()));
describe.runIf(redisUrl !== undefined)('shared buckets (Redis)', () => specification(redisFixture(redisUrl ?? '')));

function specification(fixture: StoreFixture): void {
  let buckets: SharedBuckets;
  beforeAll(async () => {
    await fixture.setup();
    buckets = await fixture.open();
  });
  afterAll(() => fixture.teardown());
  describe('reserve and peek', () => reserveSpecification(() => buckets));
  describe('give and reset', () => giveSpecification(() => buckets));
  describe('refill', () => refillSpecification(() => buckets));
  describe('concurrency', () => concurrencySpecification(fixture));
}

function reserveSpecification(buckets: () => SharedBuckets): void {
  it('a bucket never seen is full', async () => {
    expect(await buckets().peek(newKey(), STILL)).toBe(50);
  });

  it('a reservation takes `most` when that much is there, else all there is, and never less than `least`', async () => {
    const key = newKey();
    expect(await buckets().reserve(key, STILL, 1, 10)).toEqual({ granted: 10, level: 40 });
    expect(await buckets().reserve(key, STILL, 5, 100)).toEqual({ granted: 40, level: 0 });
    const other = newKey();
    expect(await buckets().reserve(other, STILL, 1, 47)).toEqual({ granted: 47, level: 3 });
    expect(await buckets().reserve(other, STILL, 5, 10)).toEqual({ granted: 0, level: 3 });
    expect(await buckets().peek(other, STILL)).toBe(3);
  });

  it('a reservation beyond the capacity of a bucket never seen takes nothing', async () => {
    const key = newKey();
    expect(await buckets().reserve(key, STILL, 51, 60)).toEqual({ granted: 0, level: 50 });
    expect(await buckets().peek(key, STILL)).toBe(50);
  });

  it('nothing is reserved from a debt, not even with a least of 0', async () => {
    const key = newKey();
    expect(await buckets().give(key, STILL, -60)).toBe(-10);
    expect(await buckets().reserve(key, STILL, 0, 10)).toEqual({ granted: 0, level: -10 });
  });

  it('keeps fractions of a point (to the thousandth)', async () => {
    const key = newKey();
    expect(await buckets().reserve(key, STILL, 0.5, 1.25)).toEqual({ granted: 1.25, level: 48.75 });
    expect(await buckets().give(key, STILL, 0.125)).toBe(48.875);
  });
}

function giveSpecification(buckets: () => SharedBuckets): void {
  it('gives back up to the capacity and charges down to -capacity, never beyond', async () => {
    const key = newKey();
    await buckets().reserve(key, STILL, 20, 20);
    expect(await buckets().give(key, STILL, 5)).toBe(35);
    expect(await buckets().give(key, STILL, 100)).toBe(50);
    expect(await buckets().give(key, STILL, -30)).toBe(20);
    expect(await buckets().give(key, STILL, -1000)).toBe(-50);
    expect(await buckets().peek(key, STILL)).toBe(-50);
    expect(await buckets().give(newKey(), STILL, 10)).toBe(50);
  });

  it('a size that changed keeps the level, within the new capacity', async () => {
    const key = newKey();
    await buckets().reserve(key, STILL, 10, 10);
    expect(await buckets().peek(key, { ...STILL, capacity: 20 })).toBe(20);
    expect(await buckets().peek(key, { ...STILL, capacity: 100 })).toBe(40);
  });

  it('reset makes a bucket full again', async () => {
    const key = newKey();
    await buckets().give(key, STILL, -100);
    await buckets().reset(key);
    expect(await buckets().peek(key, STILL)).toBe(50);
    await buckets().reset(newKey());
  });

  it('refuses what no bucket can hold', async () => {
    const key = newKey();
    await expect(buckets().reserve(key, STILL, 10, 5)).rejects.toThrow(RangeError);
    await expect(buckets().reserve(key, STILL, -1, 5)).rejects.toThrow(RangeError);
    await expect(buckets().give(key, STILL, Number.NaN)).rejects.toThrow(RangeError);
    await expect(buckets().peek(key, { capacity: 0, restorePerSecond: 1 })).rejects.toThrow(RangeError);
  });
}

function refillSpecification(buckets: () => SharedBuckets): void {
  it('refills continuously by the store clock, at most what the time between the calls refills', async () => {
    const key = newKey();
    const sent = performance.now();
    expect(await buckets().reserve(key, FAST, 50, 50)).toEqual({ granted: 50, level: 0 });
    const level = await until(
      () => buckets().peek(key, FAST),
      (points) => points >= 10,
      'a refill of 10 points',
    );
    // The store's two readings of its clock lie between this sending and that answer; each is cut to the
    // millisecond, which may add at most one millisecond (one point at this rate) to what it refilled.
    expect(level).toBeLessThanOrEqual(Math.min(50, (performance.now() - sent) * 1 + 1));
    const later = await buckets().peek(key, FAST);
    expect(later).toBeGreaterThanOrEqual(level);
  });

  it('refills up to the capacity, not beyond', async () => {
    const key = newKey();
    await buckets().give(key, FAST, -100);
    await until(
      () => buckets().peek(key, FAST),
      (points) => points === 50,
      'a full bucket',
    );
    expect(await buckets().reserve(key, FAST, 51, 51)).toMatchObject({ granted: 0 });
  });

  it('a reservation refused still sees the refill, and takes it once there', async () => {
    const key = newKey();
    await buckets().reserve(key, FAST, 50, 50);
    const reservation = await until(
      () => buckets().reserve(key, FAST, 20, 20),
      ({ granted }) => granted === 20,
      'a reservation of 20',
    );
    expect(reservation.level).toBeGreaterThanOrEqual(0);
    expect(reservation.level).toBeLessThanOrEqual(30);
  });
}

function concurrencySpecification(fixture: StoreFixture): void {
  /** 200 reservations of 1 point at once over four clients: what they were granted and how long it took. */
  async function reserveAtOnce(clients: SharedBuckets[], key: string, size: BucketSize) {
    const started = performance.now();
    const reservations = await Promise.all(Array.from({ length: 200 }, (_, i) => clients[i % clients.length]!.reserve(key, size, 1, 1)));
    return { reservations, seconds: (performance.now() - started) / 1000 };
  }

  // Four clients with connections of their own (on PGlite, one connection: the statements take turns anyway).
  it('takes turns: 200 reservations at once grant the capacity and what refilled meanwhile, no more', async () => {
    const clients = await Promise.all([fixture.open(), fixture.open(), fixture.open(), fixture.open()]);
    const size: BucketSize = { capacity: 50, restorePerSecond: 1 };
    // Every connection is opened first (peeking writes nothing), so that the reservations below meet at once.
    await Promise.all(clients.flatMap((client) => Array.from({ length: 8 }, () => client.peek(newKey(), size))));
    const stored = newKey();
    await clients[0]!.give(stored, size, 0);
    // A bucket never seen: every reservation races the first write of its row. A stored one: they queue for it.
    for (const key of [newKey(), stored]) {
      const { reservations, seconds } = await reserveAtOnce(clients, key, size);
      const granted = reservations.reduce((sum, { granted: points }) => sum + points, 0);
      // A refusal saw less than a point left: the whole capacity had been taken before it.
      expect(granted).toBeGreaterThanOrEqual(50);
      expect(granted).toBeLessThanOrEqual(50 + Math.floor(seconds * size.restorePerSecond) + 1);
      for (const { level } of reservations) expect(level).toBeGreaterThanOrEqual(0);
    }
  });
}

describe(`shared buckets in ${process.env['DATABASE_URL'] ? 'PostgreSQL' : 'PGlite'}: the sweep of full buckets`, () => {
  let own: Awaited<ReturnType<typeof openOwnDatabase>>;
  const opened: SharedBuckets[] = [];
  beforeAll(async () => {
    own = await openOwnDatabase('shared_buckets_sweep');
  });
  afterAll(async () => {
    for (const buckets of opened) await buckets.close();
    await own?.close();
  });
  const rowOf = async (key: string) => (await own.database.db.select().from(apiBudgets)).find((row) => row.key === key);

  it('a bucket is full once untouched for as long as the slowest size takes from -capacity to capacity', () => {
    expect(longestRefillMs([FAST, { capacity: 2000, restorePerSecond: 200 }])).toBe(20_000);
    expect(longestRefillMs([])).toBe(0);
  });

  it('deletes the rows of buckets full again, and a deleted bucket reads full', async () => {
    // FAST is full again 100 ms after its last change.
    const buckets = createPostgresBuckets(own.database, { sizes: [FAST], sweepEveryMs: 10 });
    opened.push(buckets);
    const key = newKey();
    await buckets.give(key, FAST, -100);
    expect(await rowOf(key)).toBeDefined();
    await until(
      () => rowOf(key),
      (row) => row === undefined,
      'the sweep',
    );
    expect(await buckets.peek(key, FAST)).toBe(50);
    // Closing stops the sweep (the next test's rows are not full after 100 ms).
    await buckets.close();
  });

  it('keeps the rows of buckets changed more recently', async () => {
    const key = newKey();
    await createPostgresBuckets(own.database).give(key, STILL, -10);
    expect(await deleteFullBudgets(own.database.db, 60_000)).toBe(0);
    expect(await rowOf(key)).toMatchObject({ level: 40_000 });
  });
});

describe.runIf(redisUrl !== undefined)('shared buckets in Redis: what Redis keeps, and an outage', () => {
  let client: Redis;
  let proxy: TcpProxy;
  const opened: SharedBuckets[] = [];
  beforeAll(async () => {
    const url = new URL(redisUrl ?? '');
    client = new Redis(url.toString());
    proxy = await startTcpProxy(url.hostname, Number(url.port || 6379));
  });
  afterAll(async () => {
    for (const buckets of opened) await buckets.close();
    await proxy?.close();
    const left = await client.keys(`${BUDGET_KEY_PREFIX}${RUN}-*`);
    if (left.length > 0) await client.del(...left);
    await client.quit();
  });
  const open = async (url: string, timeoutMs: number) => {
    const buckets = await openRedisBuckets(url, { timeoutMs });
    opened.push(buckets);
    return buckets;
  };

  it('each key expires once its bucket would be full again (and a margin of a second)', async () => {
    const buckets = await open(redisUrl ?? '', 5000);
    const size: BucketSize = { capacity: 50, restorePerSecond: 10 };
    const [spent, indebted] = [newKey(), newKey()];
    await buckets.reserve(spent, size, 10, 10);
    await buckets.give(indebted, size, -100);
    // 10 points refill in 1 s; 100 (from -50 to 50) in 10 s.
    expect(await client.pttl(`${BUDGET_KEY_PREFIX}${spent}`)).toBeGreaterThan(0);
    expect(await client.pttl(`${BUDGET_KEY_PREFIX}${spent}`)).toBeLessThanOrEqual(2000);
    expect(await client.pttl(`${BUDGET_KEY_PREFIX}${indebted}`)).toBeGreaterThan(2000);
    expect(await client.pttl(`${BUDGET_KEY_PREFIX}${indebted}`)).toBeLessThanOrEqual(11_000);
    await buckets.peek(newKey(), size);
    expect(await client.keys(`${BUDGET_KEY_PREFIX}${RUN}-${keys}`)).toEqual([]);
  });

  it('while Redis is unreachable a call fails at once (nothing queues for the reconnection), and works again after', async () => {
    const buckets = await open(proxy.routeUrl(redisUrl ?? ''), 20_000);
    const key = newKey();
    expect(await buckets.reserve(key, STILL, 5, 5)).toEqual({ granted: 5, level: 45 });
    await proxy.drop();
    const started = performance.now();
    await expect(
      until(
        () => buckets.peek(key, STILL),
        () => false,
        'a failure',
        10_000,
      ),
    ).rejects.toThrow();
    // Well before the command timeout (20 s): the call was refused, not left waiting.
    expect(performance.now() - started).toBeLessThan(10_000);
    await proxy.restore();
    const level = await until(
      () => buckets.peek(key, STILL).catch(() => undefined),
      (points) => points !== undefined,
      'Redis again',
      10_000,
    );
    expect(level).toBe(45);
  });
});
