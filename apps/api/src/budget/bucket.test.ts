import { describe, expect, it } from 'vitest';
import { createMemoryBudgetStore } from './bucket.js';
import { type BucketSize, DEFAULT_BUDGETS } from '../config/budget.js';

// Unit tests of the in-memory token buckets: pure arithmetic on the times given (milliseconds), no clock.

const SIZE: BucketSize = { capacity: 100, restorePerSecond: 10 };
const T0 = 1_000_000;
const seconds = (s: number) => T0 + s * 1000;

describe('a bucket starts full and refills continuously, up to its capacity', () => {
  it('a new key starts full', () => {
    const store = createMemoryBudgetStore();
    expect(store.peek('alice', SIZE, T0)).toBe(100);
    expect(store.take('alice', SIZE, 100, T0)).toEqual({ admitted: true, available: 0, exceedsCapacity: false });
  });

  it('the refill is continuous: a quarter of a second restores a quarter of a second of points', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 100, T0);
    expect(store.peek('alice', SIZE, seconds(0.25))).toBe(2); // 2.5 points, rounded down
    expect(store.peek('alice', SIZE, seconds(0.3))).toBe(3);
    expect(store.peek('alice', SIZE, seconds(5))).toBe(50);
  });

  it('the refill stops at the capacity, however long the key was idle', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 40, T0);
    expect(store.peek('alice', SIZE, seconds(3600))).toBe(100);
    expect(store.take('alice', SIZE, 100, seconds(3600)).admitted).toBe(true);
    expect(store.take('alice', SIZE, 1, seconds(3600)).admitted).toBe(false);
  });

  it('peek charges nothing', () => {
    const store = createMemoryBudgetStore();
    store.peek('alice', SIZE, T0);
    store.peek('alice', SIZE, T0);
    expect(store.take('alice', SIZE, 100, T0).admitted).toBe(true);
  });

  it('a clock that went back refills nothing and takes nothing back', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 50, seconds(10));
    expect(store.peek('alice', SIZE, seconds(5))).toBe(50);
    expect(store.peek('alice', SIZE, seconds(11))).toBe(60);
  });

  it('each key has a bucket of its own', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 100, T0);
    expect(store.peek('bob', SIZE, T0)).toBe(100);
  });
});

describe('a refused take charges nothing and says when to retry', () => {
  it('not enough points: refused, the level unchanged', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 70, T0);
    const refused = store.take('alice', SIZE, 50, T0);
    expect(refused).toMatchObject({ admitted: false, available: 30, exceedsCapacity: false });
    expect(store.peek('alice', SIZE, T0)).toBe(30);
  });

  it('retryAfterSeconds is the ceiling of (cost - level) / restorePerSecond, and then the cost is admitted', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 70, T0);
    // 30 available, 50 needed: 20 points at 10 a second is 2 s exactly.
    expect(store.take('alice', SIZE, 50, T0).retryAfterSeconds).toBe(2);
    // 21 points missing: 2.1 s, told as 3.
    expect(store.take('alice', SIZE, 51, T0).retryAfterSeconds).toBe(3);
    expect(store.take('alice', SIZE, 50, seconds(1.999)).admitted).toBe(false);
    expect(store.take('alice', SIZE, 50, seconds(2))).toEqual({ admitted: true, available: 0, exceedsCapacity: false });
  });

  it('refusals every millisecond do not wear the level down: a retry after retryAfterSeconds is admitted', () => {
    const store = createMemoryBudgetStore();
    const slow: BucketSize = { capacity: 100, restorePerSecond: 7 };
    store.take('alice', slow, 100, T0);
    expect(store.take('alice', slow, 14, T0).retryAfterSeconds).toBe(2); // 14 points at 7 a second
    for (let ms = 1; ms < 2000; ms += 1) expect(store.take('alice', slow, 14, T0 + ms).admitted).toBe(false);
    expect(store.take('alice', slow, 14, seconds(2))).toEqual({ admitted: true, available: 0, exceedsCapacity: false });
  });

  it('a cost above the capacity can never be admitted: exceedsCapacity, no retryAfterSeconds, nothing charged', () => {
    const store = createMemoryBudgetStore();
    const refused = store.take('alice', SIZE, 101, T0);
    expect(refused).toEqual({ admitted: false, available: 100, exceedsCapacity: true });
    expect(refused.retryAfterSeconds).toBeUndefined();
    expect(store.peek('alice', SIZE, T0)).toBe(100);
  });

  it('a cost of exactly the capacity fits it', () => {
    const store = createMemoryBudgetStore();
    expect(store.take('alice', SIZE, 100, T0)).toMatchObject({ admitted: true, exceedsCapacity: false });
  });

  it('a negative or non-finite cost is a programming error', () => {
    const store = createMemoryBudgetStore();
    expect(() => store.take('alice', SIZE, -1, T0)).toThrow(RangeError);
    expect(() => store.take('alice', SIZE, Number.NaN, T0)).toThrow(RangeError);
  });
});

describe('settle charges more or refunds an admitted operation, within [-capacity, capacity]', () => {
  it('a refund restores points, up to the capacity and not beyond', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 60, T0);
    expect(store.settle('alice', SIZE, -25, T0)).toBe(65);
    expect(store.settle('alice', SIZE, -1000, T0)).toBe(100);
  });

  it('a further charge may take the level below zero, down to -capacity and not below', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 60, T0);
    expect(store.settle('alice', SIZE, 90, T0)).toBe(-50);
    expect(store.settle('alice', SIZE, 1000, T0)).toBe(-100);
  });

  it('a negative level delays the next admission accordingly: the debt refills first', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 100, T0);
    store.settle('alice', SIZE, 50, T0);
    // -50 now: 10 points need 60 points of refill, 6 s.
    expect(store.take('alice', SIZE, 10, T0)).toEqual({ admitted: false, available: -50, exceedsCapacity: false, retryAfterSeconds: 6 });
    expect(store.take('alice', SIZE, 10, seconds(5.9)).admitted).toBe(false);
    expect(store.take('alice', SIZE, 10, seconds(6))).toMatchObject({ admitted: true, available: 0 });
  });

  it('the minimum charge of a refused operation is a settle of 1: it charges even when nothing was admitted', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 100, T0);
    expect(store.take('alice', SIZE, 5, T0).admitted).toBe(false);
    expect(store.settle('alice', SIZE, 1, T0)).toBe(-1);
  });

  it('settle refills to `now` before it charges', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 100, T0);
    expect(store.settle('alice', SIZE, 10, seconds(3))).toBe(20);
  });
});

describe('keys are bounded and a forgotten key is full again', () => {
  it('reset forgets a key: its bucket is full again', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 100, T0);
    store.reset('alice');
    expect(store.peek('alice', SIZE, T0)).toBe(100);
  });

  it('beyond maxKeys the least recently used key is dropped (full again); a use makes a key recent', () => {
    const store = createMemoryBudgetStore({ maxKeys: 2 });
    store.take('alice', SIZE, 100, T0);
    store.take('bob', SIZE, 100, T0);
    store.take('alice', SIZE, 0, T0); // alice used again: bob is now the least recently used
    store.take('carol', SIZE, 100, T0);
    expect(store.peek('bob', SIZE, T0)).toBe(100);
    expect(store.peek('alice', SIZE, T0)).toBe(0);
    expect(store.peek('carol', SIZE, T0)).toBe(0);
  });

  it('maxKeys must be a whole number of at least 1', () => {
    expect(() => createMemoryBudgetStore({ maxKeys: 0 })).toThrow(RangeError);
    expect(() => createMemoryBudgetStore({ maxKeys: 1.5 })).toThrow(RangeError);
  });
});

describe('a size change (a plan change) keeps the level, clamped to the new capacity', () => {
  const PRO: BucketSize = { capacity: 1000, restorePerSecond: 100 };

  it('down to a smaller plan: the level is clamped to the new capacity', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', PRO, 200, T0); // 800 on PRO
    expect(store.peek('alice', SIZE, T0)).toBe(100);
    expect(store.take('alice', SIZE, 100, T0).admitted).toBe(true);
  });

  it('up to a larger plan: the level is kept, then refills at the new rate to the new capacity', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', SIZE, 60, T0); // 40 on the small size
    expect(store.peek('alice', PRO, T0)).toBe(40);
    expect(store.peek('alice', PRO, seconds(1))).toBe(140);
    expect(store.peek('alice', PRO, seconds(100))).toBe(1000);
  });

  it('a debt beyond the new capacity is clamped to -capacity', () => {
    const store = createMemoryBudgetStore();
    store.take('alice', PRO, 1000, T0);
    store.settle('alice', PRO, 900, T0); // -900 on PRO
    expect(store.peek('alice', SIZE, T0)).toBe(-100);
  });
});

describe('DEFAULT_BUDGETS are sized as documented', () => {
  /** Milliseconds from the first operation of a loop (one every `everyMs`) to its first refusal. */
  function firstRefusalMs(size: BucketSize, cost: number, everyMs: number): number {
    const store = createMemoryBudgetStore();
    for (let ms = 0; ; ms += everyMs) if (!store.take('loop', size, cost, T0 + ms).admitted) return ms;
  }

  it.each([
    ['guest', DEFAULT_BUDGETS.guest],
    ['FREE', DEFAULT_BUDGETS.plans.FREE],
    ['PRO', DEFAULT_BUDGETS.plans.PRO],
  ])('%s: a loop of 5,000-point operations, 100 a second, is refused within a second', (_name, size) => {
    expect(firstRefusalMs(size, 5000, 10)).toBeLessThan(1000);
  });

  it("FREE: the demo's heaviest operation (the document list, 205 points), 10 a second for a minute, is never refused", () => {
    const store = createMemoryBudgetStore();
    for (let ms = 0; ms < 60_000; ms += 100) expect(store.take('demo', DEFAULT_BUDGETS.plans.FREE, 205, T0 + ms).admitted).toBe(true);
  });
});
