import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BucketSize } from '../config/budget.js';
import { createMemoryBudgetStore } from './bucket.js';
import type { SharedBuckets } from './shared-buckets.js';
import { createSlicedStore, type SlicedStoreOptions } from './sliced-store.js';

// The sliced store spends the shared buckets without a round trip per operation. Its shared side here is the memory
// store's arithmetic behind promises (the real stores are specified in shared-buckets.test.ts), counting its calls
// and failing on demand.

const SIZE: BucketSize = { capacity: 100, restorePerSecond: 10 };
const SLICE = SIZE.capacity / 20;
/** where the clock moves and no refill should blur the figures */
const SLOW: BucketSize = { capacity: 100, restorePerSecond: 0.001 };

let clock = 0;
const now = () => clock;

function fakeShared() {
  const memory = createMemoryBudgetStore();
  const calls = { reserve: 0, give: 0 };
  let failing: Error | undefined;
  const check = () => {
    if (failing) throw failing;
  };
  const shared: SharedBuckets = {
    kind: 'redis',
    async reserve(key, size, least, most) {
      calls.reserve += 1;
      check();
      const level = memory.peek(key, size, clock);
      if (level < least) return { granted: 0, level };
      const granted = Math.min(most, level);
      return { granted, level: memory.settle(key, size, granted, clock) };
    },
    async give(key, size, points) {
      calls.give += 1;
      check();
      return memory.settle(key, size, -points, clock);
    },
    async peek(key, size) {
      check();
      return memory.peek(key, size, clock);
    },
    async reset(key) {
      memory.reset(key);
    },
    async close() {},
  };
  return {
    shared,
    calls,
    level: (key: string, size = SIZE) => memory.peek(key, size, clock),
    fail: (error?: Error) => void (failing = error),
  };
}

const open = (shared: SharedBuckets, options: Partial<SlicedStoreOptions> = {}) => createSlicedStore({ shared, now, ...options });

beforeEach(() => {
  clock = 0;
  vi.useFakeTimers();
});
afterEach(() => vi.useRealTimers());

describe('a sliced store', () => {
  it('admits a slice worth of operations with one round trip', async () => {
    const { shared, calls, level } = fakeShared();
    const store = open(shared);
    expect(await store.take('a', SIZE, 1, now())).toMatchObject({ admitted: true });
    for (let i = 1; i < SLICE; i++) expect(store.take('a', SIZE, 1, now())).toMatchObject({ admitted: true });
    expect(calls.reserve).toBe(1);
    expect(level('a')).toBe(SIZE.capacity - SLICE);
  });

  it('reserves what one operation needs when it costs more than a slice', async () => {
    const { shared, level } = fakeShared();
    const store = open(shared);
    expect(await store.take('a', SIZE, 40, now())).toMatchObject({ admitted: true, available: 60 });
    expect(level('a')).toBe(60);
  });

  it('waits for a reservation in flight instead of reserving again', async () => {
    const { shared, calls } = fakeShared();
    const store = open(shared);
    const admissions = await Promise.all(Array.from({ length: SLICE }, () => store.take('a', SIZE, 1, now())));
    expect(admissions.every((admission) => admission.admitted)).toBe(true);
    expect(calls.reserve).toBe(1);
  });

  it('never holds more than a slice: a refund beyond it goes back to the shared bucket', async () => {
    const { shared, level } = fakeShared();
    const store = open(shared);
    await store.take('a', SIZE, 50, now());
    expect(level('a', SLOW)).toBe(50);
    store.settle('a', SIZE, -48, now()); // it cost 2 of the 50 admitted
    await vi.waitFor(() => expect(level('a')).toBe(SIZE.capacity - 2 - SLICE));
  });

  it('refuses with the seconds until enough has refilled, and a flood of refusals costs no round trip each', async () => {
    const { shared, calls } = fakeShared();
    const store = open(shared);
    expect(await store.take('a', SIZE, 100, now())).toMatchObject({ admitted: true, available: 0 });
    const refused = await store.take('a', SIZE, 30, now());
    expect(refused).toMatchObject({ admitted: false, exceedsCapacity: false, retryAfterSeconds: 3 });
    const reserves = calls.reserve;
    for (let i = 0; i < 10; i++) expect(store.take('a', SIZE, 30, now())).toMatchObject({ admitted: false, retryAfterSeconds: 3 });
    expect(calls.reserve).toBe(reserves);
    clock += 3000;
    expect(await store.take('a', SIZE, 30, now())).toMatchObject({ admitted: true });
  });

  it('refuses at once what exceeds the capacity, with no Retry-After', () => {
    const { shared } = fakeShared();
    expect(open(shared).take('a', SIZE, 101, now())).toEqual({ admitted: false, available: 100, exceedsCapacity: true });
  });

  it('gives an idle caller slice back, and a debt too', async () => {
    const { shared, level } = fakeShared();
    const store = open(shared, { holdMs: 1000 });
    await store.take('a', SLOW, 1, now());
    await store.take('b', SLOW, 1, now());
    store.settle('b', SLOW, 10, now()); // b's operation cost 10 more than admitted: 6 more than its slice held
    expect(level('a', SLOW)).toBe(SLOW.capacity - SLICE);
    clock += 2000;
    await vi.advanceTimersByTimeAsync(2000);
    expect(level('a', SLOW)).toBe(SLOW.capacity - 1);
    expect(level('b', SLOW)).toBe(SLOW.capacity - 11);
  });

  it('sends one call at a time per caller: an admission that needs a reservation during a give-back waits for its answer, so what it reports is the newest level', async () => {
    const { shared, calls } = fakeShared();
    let answerGive = () => {};
    const give = shared.give;
    shared.give = async (...args) => {
      await new Promise<void>((resolve) => (answerGive = resolve));
      return give(...args);
    };
    const store = open(shared);
    await store.take('a', SLOW, 50, now()); // the shared bucket: 50
    store.settle('a', SLOW, -48, now()); // 48 refunded: the 43 beyond the slice go back (not answered yet)
    const admission = store.take('a', SLOW, 10, now()); // the slice holds 5: a reservation is needed
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.reserve).toBe(1);
    answerGive();
    expect(await admission).toEqual({ admitted: true, available: 88, exceedsCapacity: false });
    expect(calls.reserve).toBe(2);
  });

  it('an operation settled after its idle slice went back is reported from what is known of the shared bucket', async () => {
    const { shared } = fakeShared();
    const store = open(shared, { holdMs: 1000 });
    await store.take('a', SLOW, 50, now());
    clock += 2000;
    await vi.advanceTimersByTimeAsync(2000); // the request is still running: its caller looks idle
    expect(store.settle('a', SLOW, 10, now())).toBe(40);
  });

  it('asks the shared bucket again for a caller idle a while (other instances may have spent from it)', async () => {
    const { shared } = fakeShared();
    const [first, second] = [open(shared), open(shared)];
    await first.take('a', SLOW, 1, now());
    expect(first.peek('a', SLOW, now())).toBe(99);
    await second.take('a', SLOW, 50, now());
    clock += 2000;
    await vi.advanceTimersByTimeAsync(2000);
    expect(await first.peek('a', SLOW, now())).toBe(49);
  });

  it('knows at most maxCallers at once: the one known longest goes, what it holds given back, and is known afresh', async () => {
    const { shared, calls, level } = fakeShared();
    const store = open(shared, { maxCallers: 2 });
    await store.take('a', SLOW, 1, now());
    await store.take('b', SLOW, 1, now());
    expect(level('a', SLOW)).toBe(SLOW.capacity - SLICE);
    await store.take('c', SLOW, 1, now()); // a goes: its slice back, less the 1 it spent
    await vi.waitFor(() => expect(level('a', SLOW)).toBe(SLOW.capacity - 1));
    expect(level('b', SLOW)).toBe(SLOW.capacity - SLICE);
    const reserves = calls.reserve;
    expect(await store.take('a', SLOW, 1, now())).toMatchObject({ admitted: true }); // b goes in turn
    expect(calls.reserve).toBe(reserves + 1);
    await vi.waitFor(() => expect(level('b', SLOW)).toBe(SLOW.capacity - 1));
  });

  it('gives back what it holds when it closes', async () => {
    const { shared, level } = fakeShared();
    const store = open(shared);
    await store.take('a', SIZE, 1, now());
    await store.close();
    expect(level('a')).toBe(SIZE.capacity - 1);
  });
});

describe('several instances on one shared bucket', () => {
  it('admit at most capacity + refill + one slice per instance over a window', async () => {
    const { shared } = fakeShared();
    const instances = [open(shared), open(shared), open(shared)];
    // Each instance holds a slice when the window begins (a fresh bucket: reset, say, or refilled).
    for (const store of instances) await store.take('a', SIZE, 1, now());
    await shared.reset('a');
    let admitted = 0;
    for (let round = 0; round < 100; round++)
      for (const store of instances) if ((await store.take('a', SIZE, 1, now())).admitted) admitted += 1;
    expect(admitted).toBeLessThanOrEqual(SIZE.capacity + instances.length * SLICE);
    expect(admitted).toBeGreaterThanOrEqual(SIZE.capacity);
  });
});

describe('an outage of the shared buckets', () => {
  it('decides locally, says so once, asks again after retryMs, and says when it is over', async () => {
    const { shared, calls, fail } = fakeShared();
    const onFault = vi.fn();
    const onRecovered = vi.fn();
    const onLocalDecision = vi.fn();
    const store = open(shared, { retryMs: 1000, onFault, onRecovered, onLocalDecision });
    fail(new Error('connection refused'));
    expect(await store.take('a', SIZE, 1, now())).toMatchObject({ admitted: true });
    for (let i = 0; i < 5; i++) expect(store.take('a', SIZE, 60, now())).toMatchObject({ admitted: i === 0 });
    expect(onFault).toHaveBeenCalledTimes(1);
    expect(onLocalDecision).toHaveBeenCalledTimes(6);
    expect(calls.reserve).toBe(1);
    fail(undefined);
    clock += 1000;
    expect(await store.take('b', SIZE, 1, now())).toMatchObject({ admitted: true });
    expect(onRecovered).toHaveBeenCalledTimes(1);
    expect(calls.reserve).toBe(2);
  });

  it('keeps a slice that could not be given back', async () => {
    const { shared, calls, fail, level } = fakeShared();
    const onFault = vi.fn();
    const store = open(shared, { retryMs: 1000, onFault });
    await store.take('a', SLOW, 50, now());
    fail(new Error('connection refused'));
    store.settle('a', SLOW, -49, now()); // 49 refunded: 44 beyond the slice, which cannot go back now
    await vi.waitFor(() => expect(onFault).toHaveBeenCalledTimes(1));
    fail(undefined);
    clock += 1000;
    expect(store.take('a', SLOW, 40, now())).toMatchObject({ admitted: true });
    expect(calls.reserve).toBe(1);
    expect(level('a', SLOW)).toBe(50);
  });
});
