import { giveBudget, peekBudget, reserveBudget, resetBudget, type DatabaseHandle } from '@latchkey/db';
import type { SharedBuckets } from './shared-buckets.js';
import { checkPoints, checkReservation, inMilli, toMilli, toPoints } from './shared-bucket-units.js';

/**
 * The shared buckets in PostgreSQL (no REDIS_URL): one row of `api_budgets` per bucket, each call one atomic
 * statement refilled by the database's clock (@latchkey/db's repositories/budgets.ts). Every call has a deadline
 * of its own (DATABASE_TIMEOUT), like a request's: a database that is slow or down fails the call in time, and
 * the caller spends its local buckets meanwhile.
 *
 * The handle is the service's: `close` leaves it open.
 */
export function createPostgresBuckets(database: Pick<DatabaseHandle, 'until' | 'deadlineFromNow'>): SharedBuckets {
  const db = () => database.until(database.deadlineFromNow());
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
    close: async () => undefined,
  };
}
