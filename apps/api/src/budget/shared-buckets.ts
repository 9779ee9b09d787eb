import type { BucketSize } from '../config/budget.js';

/**
 * Token buckets that every instance shares (REDIS_URL: Redis; else PostgreSQL): the same continuous-refill bucket
 * as the memory store's (bucket.ts), kept where all instances read and write it in one atomic step each, refilled by
 * the store's own clock (Redis `TIME`, PostgreSQL `clock_timestamp()`) so that the instances' clocks never matter.
 * Levels are kept in thousandths of a point; what is passed and answered here is in points (fractional).
 *
 * An instance does not call these per operation: it reserves a slice of a bucket and spends it locally
 * (sliced-store.ts), and gives back what it did not spend.
 */
export interface SharedBuckets {
  readonly kind: 'redis' | 'postgres';
  /**
   * Takes points from a bucket refilled to now, if at least `least` are available: `most` of them, or all that is
   * available when that is less (never below `least`). Otherwise takes nothing. A bucket never seen is full.
   * @returns what was granted (0 when refused) and the bucket's level after, in points
   */
  reserve(key: string, size: BucketSize, least: number, most: number): Promise<Reservation>;
  /**
   * Adds `points` to a bucket refilled to now (a slice given back, a refund), or takes them when negative (a debt):
   * the level stays within [-capacity, capacity].
   * @returns the level after, in points
   */
  give(key: string, size: BucketSize, points: number): Promise<number>;
  /** The level now without changing it (a bucket never seen: its capacity). */
  peek(key: string, size: BucketSize): Promise<number>;
  /** Forgets a bucket: it is full again. */
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}

export interface Reservation {
  granted: number;
  level: number;
}
