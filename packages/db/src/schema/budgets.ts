import { bigint, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The fair-use token buckets every instance shares when there is no Redis (apps/api's postgres-buckets.ts): one row
 * per caller's bucket. `level` is in thousandths of a point, so that a refill over whole milliseconds at a whole
 * rate is a whole number and levels stay exact however often a bucket is refilled; `refilled_at` is the database's
 * clock (milliseconds) when `level` was last refilled. A bucket's size is not stored: the caller passes it with
 * each statement (a plan change applies at once). A row never seen is a full bucket, so a row whose bucket would
 * be full again may be deleted.
 */
export const apiBudgets = pgTable('api_budgets', {
  key: text('key').primaryKey(),
  level: bigint('level', { mode: 'number' }).notNull(),
  refilledAt: timestamp('refilled_at', { withTimezone: true, mode: 'date' }).notNull(),
});
