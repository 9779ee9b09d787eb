import { eq, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client.js';
import { rowsOf } from '../rows.js';
import { apiBudgets } from '../schema/index.js';

// The fair-use token buckets every instance shares (apps/api's postgres-buckets.ts), one statement each: a bucket
// is read, refilled to now, changed and written back atomically, however many connections spend it at once.
// Refilled by the database's own clock (`clock_timestamp()`, to the millisecond), so that the instances' clocks
// never matter. Everything here is in thousandths of a point, the unit the table keeps.

/**
 * A bucket's size in the table's units: `capacity` in thousandths of a point, `refillPerMs` in thousandths of a
 * point per millisecond (numerically its refill in points per second). Passed with every statement, not stored:
 * a size that changed (a plan change) keeps the level, within the new capacity.
 */
export interface StoredBucketSize {
  capacity: number;
  refillPerMs: number;
}

/** What a reservation took (0 when refused) and the level after, in thousandths of a point. */
export interface BudgetReservation {
  granted: number;
  level: number;
}

/** Now by the database's clock, to the millisecond: whole milliseconds at a whole rate refill a whole number. */
const NOW = sql`date_trunc('milliseconds', clock_timestamp())`;

/**
 * The level of a bucket stored as `level` at `at`, refilled to `now` and kept within [-capacity, capacity]: nothing
 * refills for a clock that went back, and a fractional refill is rounded down (the bucket never gains what did not
 * refill yet). `level` must not be null: `greatest` ignores a null, and a missing row would read as -capacity.
 */
function refilled(level: SQL, at: SQL, now: SQL, { capacity, refillPerMs }: StoredBucketSize): SQL {
  const elapsedMs = sql`greatest(0, extract(epoch from ${now} - ${at}) * 1000)`;
  return clamped(sql`${level} + floor(${elapsedMs} * ${refillPerMs}::numeric)::bigint`, capacity);
}

const clamped = (level: SQL, capacity: number): SQL => sql`least(${capacity}::bigint, greatest(-${capacity}::bigint, ${level}))`;

/** A concurrent first reservation of the same bucket won the insert: this one tries again (it then finds the row). */
const RESERVE_ATTEMPTS = 3;

/**
 * Takes thousandths of a point from the bucket `key` refilled to now, if at least `least` are available: `most`, or
 * all that is available when that is less; otherwise nothing (a never-seen bucket is full). The stored row is locked
 * (`for update`) for the statement, so concurrent reservations take turns. A bucket nobody has stored yet has no
 * row to lock: when two reservations insert it at once, the second one's update is skipped (`where exists`: it
 * decided on a full bucket that is no longer full) and it is sent again.
 */
export async function reserveBudget(
  db: Database,
  key: string,
  size: StoredBucketSize,
  least: number,
  most: number,
): Promise<BudgetReservation> {
  for (let attempt = 1; ; attempt++) {
    const [row] = rowsOf<{ level: string | number; granted: string | number }>(await db.execute(reserveStatement(key, size, least, most)));
    if (row) return { granted: Number(row.granted), level: Number(row.level) };
    if (attempt >= RESERVE_ATTEMPTS) throw new Error(`budget ${key}: reservation kept racing its row's first insert`);
  }
}

function reserveStatement(key: string, size: StoredBucketSize, least: number, most: number): SQL {
  const { capacity } = size;
  return sql`with clock as materialized (select ${NOW} as now),
      stored as (select level, refilled_at from ${apiBudgets} where key = ${key} for update),
      refilled as (
        select case when s.level is null then ${capacity}::bigint
            else ${refilled(sql`s.level`, sql`s.refilled_at`, sql`c.now`, size)} end as level,
          greatest(c.now, s.refilled_at) as at
        from clock c left join stored s on true),
      decided as (
        select level, at, case when level >= ${least}::bigint then least(${most}::bigint, level) else 0 end as granted
        from refilled)
    insert into ${apiBudgets} (key, level, refilled_at)
    select ${key}, level - granted, at from decided
    on conflict (key) do update set level = excluded.level, refilled_at = excluded.refilled_at
      where exists (select 1 from stored)
    returning level, (select granted from decided) as granted`;
}

/**
 * Adds `amount` thousandths of a point to the bucket `key` refilled to now (a slice given back, a refund), or takes
 * them when negative (a debt); the level stays within [-capacity, capacity]. One upsert: its update arm works on
 * the row as it is when locked, so concurrent gifts add up.
 * @returns the level after
 */
export async function giveBudget(db: Database, key: string, size: StoredBucketSize, amount: number): Promise<number> {
  const { capacity } = size;
  const [row] = rowsOf<{ level: string | number }>(
    await db.execute(sql`insert into ${apiBudgets} as b (key, level, refilled_at)
      values (${key}, ${clamped(sql`${capacity}::bigint + ${amount}::bigint`, capacity)}, ${NOW})
      on conflict (key) do update set
        level = ${clamped(sql`${refilled(sql`b.level`, sql`b.refilled_at`, sql`excluded.refilled_at`, size)} + ${amount}::bigint`, capacity)},
        refilled_at = greatest(b.refilled_at, excluded.refilled_at)
      returning level`),
  );
  return Number(row!.level);
}

/** The level of the bucket `key` now, in thousandths of a point, without changing it (never seen: its capacity). */
export async function peekBudget(db: Database, key: string, size: StoredBucketSize): Promise<number> {
  const [row] = rowsOf<{ level: string | number }>(
    await db.execute(sql`select coalesce(
      (select ${refilled(sql`level`, sql`refilled_at`, NOW, size)} from ${apiBudgets} where key = ${key}),
      ${size.capacity}::bigint) as level`),
  );
  return Number(row!.level);
}

/** Forgets the bucket `key`: it is full again. */
export async function resetBudget(db: Database, key: string): Promise<void> {
  await db.delete(apiBudgets).where(eq(apiBudgets.key, key));
}

/**
 * Deletes the rows of buckets that are full again whatever their size: those last refilled more than `fullAfterMs`
 * ago (the longest any bucket takes from -capacity to capacity), by the database's clock. Forgetting a full bucket
 * changes nothing: a bucket never seen is full. No index serves this on purpose: every reservation moves
 * `refilled_at`, and an index on it would make each of those updates write the index too (no HOT update), while
 * a sweep every few minutes reads a table of one row per recent caller.
 * @returns how many rows were deleted
 */
export async function deleteFullBudgets(db: Database, fullAfterMs: number): Promise<number> {
  const [row] = rowsOf<{ deleted: string | number }>(
    await db.execute(sql`with gone as (
        delete from ${apiBudgets} where refilled_at < clock_timestamp() - ${fullAfterMs}::float8 * interval '1 millisecond'
        returning 1)
      select count(*) as deleted from gone`),
  );
  return Number(row!.deleted);
}
