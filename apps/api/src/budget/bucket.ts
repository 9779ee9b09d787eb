import type { MaybePromise } from '@whatwg-node/promise-helpers';
import type { BucketSize } from '../config/budget.js';

/**
 * Token buckets of cost points, one per key (a caller), in the memory of one process. A bucket starts full, refills
 * continuously at `restorePerSecond` up to `capacity`, and may owe up to `capacity` (settling an operation that cost
 * more than admitted): never below `-capacity`. Pure arithmetic on the times the caller passes: no timers, no clock.
 */

export interface Admission {
  admitted: boolean;
  /** points available after this decision (after the charge when admitted), rounded down; may be negative */
  available: number;
  /** seconds until `cost` points are available (ceil), when refused and the cost fits the capacity; else undefined */
  retryAfterSeconds?: number;
  /** the cost exceeds the bucket's capacity: it can never be admitted */
  exceedsCapacity: boolean;
}

/**
 * A refused `take` charges nothing. A caller that charges refused operations too (a minimum of 1 point, so that a
 * flood of refusals is not free) does so with `settle(key, size, 1, now)`: settling charges whether or not an
 * operation was admitted.
 */
export interface BudgetStore {
  /**
   * Charges `cost` if at least `cost` points are available now (refilled to `now`), else charges nothing. At once,
   * or after a round trip to the shared buckets (sliced-store.ts).
   */
  take(key: string, size: BucketSize, cost: number, now: number): MaybePromise<Admission>;
  /**
   * Settles an admitted operation: `delta` > 0 charges more (the level may fall to -capacity, not below), < 0 refunds
   * (up to capacity). Returns the level after, rounded down.
   */
  settle(key: string, size: BucketSize, delta: number, now: number): number;
  /** The level now without charging (refilled to `now`), rounded down. */
  peek(key: string, size: BucketSize, now: number): MaybePromise<number>;
  /** Forgets a key (its bucket is full again). */
  reset(key: string): MaybePromise<void>;
}

/** The buckets of one process: every answer at once. */
export interface MemoryBudgetStore extends BudgetStore {
  take(key: string, size: BucketSize, cost: number, now: number): Admission;
  peek(key: string, size: BucketSize, now: number): number;
  reset(key: string): void;
}

export interface MemoryBudgetStoreOptions {
  /**
   * Keys remembered; beyond them the least recently used is forgotten, and so full again. That is safe: forgetting
   * only ever forgives (a debt, a spent bucket), it never refuses anyone wrongly, and a caller is forgotten only
   * after `maxKeys` other keys were used since its last operation. A flood of new keys costs memory up to this bound.
   * @default 100_000
   */
  maxKeys?: number;
}

/**
 * A bucket as stored: its level at `at` (ms), in thousandths of a point. A refill over whole milliseconds at a whole
 * rate is then a whole number, so levels stay exact however often a bucket is refilled (in points, 49.99 + 0.01
 * falls short of 50, and a caller retrying after `retryAfterSeconds` would be refused).
 */
interface Level {
  milli: number;
  at: number;
}

/**
 * The level at `now`: refilled for the time since `at` and kept within [-capacity, capacity] of the size given now.
 * A size that changed (a plan change) keeps the level, clamped to the new capacity. A clock that went back refills
 * nothing.
 */
function refilled(stored: Level | undefined, { capacity, restorePerSecond }: BucketSize, now: number): Level {
  if (!stored) return { milli: capacity * 1000, at: now };
  const elapsed = Math.max(0, now - stored.at);
  return { milli: clamp(stored.milli + elapsed * restorePerSecond, capacity), at: Math.max(stored.at, now) };
}

const clamp = (milli: number, capacity: number) => Math.min(capacity * 1000, Math.max(-capacity * 1000, milli));

/** Whole points, rounded down: what callers are told. */
const points = (bucket: Level) => Math.floor(bucket.milli / 1000);

function checkCost(cost: number): void {
  if (!Number.isFinite(cost) || cost < 0) throw new RangeError(`a cost is a finite number of at least 0, not ${cost}`);
}

/** Seconds until `bucket` has refilled to `cost` points, rounded up. */
function secondsUntil(cost: number, bucket: Level, restorePerSecond: number): number {
  return Math.ceil((cost * 1000 - bucket.milli) / (restorePerSecond * 1000));
}

export function createMemoryBudgetStore({ maxKeys = 100_000 }: MemoryBudgetStoreOptions = {}): MemoryBudgetStore {
  if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new RangeError(`maxKeys is a whole number of at least 1, not ${maxKeys}`);
  // Insertion order is recency: every use re-inserts its key, so the first key is the least recently used.
  const buckets = new Map<string, Level>();

  const store = (key: string, bucket: Level): void => {
    buckets.delete(key);
    buckets.set(key, bucket);
    if (buckets.size > maxKeys) {
      const oldest = buckets.keys().next().value;
      if (oldest !== undefined) buckets.delete(oldest);
    }
  };

  return {
    take(key, size, cost, now) {
      checkCost(cost);
      const bucket = refilled(buckets.get(key), size, now);
      const exceedsCapacity = cost > size.capacity;
      const admitted = !exceedsCapacity && bucket.milli >= cost * 1000;
      if (admitted) bucket.milli -= cost * 1000;
      store(key, bucket);
      const available = points(bucket);
      if (admitted || exceedsCapacity) return { admitted, available, exceedsCapacity };
      return { admitted, available, exceedsCapacity, retryAfterSeconds: secondsUntil(cost, bucket, size.restorePerSecond) };
    },
    settle(key, size, delta, now) {
      if (!Number.isFinite(delta)) throw new RangeError(`a delta is a finite number, not ${delta}`);
      const bucket = refilled(buckets.get(key), size, now);
      bucket.milli = clamp(bucket.milli - delta * 1000, size.capacity);
      store(key, bucket);
      return points(bucket);
    },
    peek(key, size, now) {
      return points(refilled(buckets.get(key), size, now));
    },
    reset(key) {
      buckets.delete(key);
    },
  };
}
