import { deleteFullBudgets, giveBudget, peekBudget, reserveBudget, resetBudget, type DatabaseHandle } from '@latchkey/db';
import type { BucketSize } from '../config/budget.js';
import type { SharedBuckets } from './shared-buckets.js';
import { checkPoints, checkReservation, inMilli, toMilli, toPoints } from './shared-bucket-units.js';

export interface PostgresBucketsOptions {
  /**
   * Every size a bucket is spent at (the guest's and each plan's). With them, rows of buckets that are full again
   * whatever their size are deleted every `sweepEveryMs`, so that the table keeps only recent callers; without
   * them no row is ever deleted.
   */
  sizes?: readonly BucketSize[];
  /** @default 300_000 */
  sweepEveryMs?: number;
}

/** How long the slowest of `sizes` takes to refill from -capacity to capacity: a bucket untouched longer is full. */
export function longestRefillMs(sizes: readonly BucketSize[]): number {
  return Math.max(0, ...sizes.map(({ capacity, restorePerSecond }) => Math.ceil(((2 * capacity) / restorePerSecond) * 1000)));
}

/**
 * The shared buckets in PostgreSQL (no REDIS_URL): one row of `api_budgets` per bucket, each call one atomic
 * statement refilled by the database's clock (@latchkey/db's repositories/budgets.ts). Every call has a deadline
 * of its own (DATABASE_TIMEOUT), like a request's: a database that is slow or down fails the call in time, and
 * the caller spends its local buckets meanwhile.
 *
 * The handle is the service's: `close` leaves it open (it only stops the sweep).
 */
export function createPostgresBuckets(
  database: Pick<DatabaseHandle, 'until' | 'deadlineFromNow' | 'background'>,
  options: PostgresBucketsOptions = {},
): SharedBuckets {
  const db = () => database.until(database.deadlineFromNow());
  const stopSweeping = options.sizes ? sweep(database, longestRefillMs(options.sizes), options.sweepEveryMs ?? 300_000) : () => undefined;
  return {
    kind: 'postgres',
    async reserve(key, size, least, most) {
      checkReservation(least, most);
      const { granted, level } = await reserveBudget(db(), key, inMilli(size), toMilli(least), toMilli(most));
      return { granted: toPoints(granted), level: toPoints(level) };
    },
    async give(key, size, points) {
      checkPoints(points);
      return toPoints(await giveBudget(db(), key, inMilli(size), toMilli(points)));
    },
    async peek(key, size) {
      return toPoints(await peekBudget(db(), key, inMilli(size)));
    },
    reset: (key) => resetBudget(db(), key),
    close: async () => stopSweeping(),
  };
}

/**
 * Deletes the rows of full buckets every `everyMs` (work of the process: `background`, its own deadline). A sweep
 * that fails is tried again at the next one: rows of full buckets are harmless meanwhile. The timer never keeps
 * the process alive. Answers the function that stops it.
 */
function sweep(database: Pick<DatabaseHandle, 'background'>, fullAfterMs: number, everyMs: number): () => void {
  const timer = setInterval(() => {
    deleteFullBudgets(database.background, fullAfterMs).catch(() => undefined);
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
