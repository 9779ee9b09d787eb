import type { BucketSize } from '../config/budget.js';

// What both shared stores (redis-buckets.ts, postgres-buckets.ts) do alike: they keep levels in thousandths of a
// point and are called in points, and they refuse the same arguments.

/**
 * Points in thousandths, rounded to the nearest: a whole number, so that stored levels stay exact (see bucket.ts,
 * `Level`).
 */
export const toMilli = (points: number): number => Math.round(points * 1000);

export const toPoints = (milli: number): number => milli / 1000;

/**
 * A size in the stores' units: the capacity in thousandths of a point, and the refill in thousandths of a point
 * per millisecond (numerically the same as points per second).
 */
export function inMilli({ capacity, restorePerSecond }: BucketSize): { capacity: number; refillPerMs: number } {
  if (!(capacity > 0 && Number.isFinite(capacity)) || !(restorePerSecond > 0 && Number.isFinite(restorePerSecond))) {
    throw new RangeError(`a bucket's capacity and refill are finite positive numbers, not ${capacity} and ${restorePerSecond}`);
  }
  return { capacity: toMilli(capacity), refillPerMs: restorePerSecond };
}

/** A reservation asks for at least 0 points and at most no fewer than its least. */
export function checkReservation(least: number, most: number): void {
  if (!(Number.isFinite(least) && Number.isFinite(most) && least >= 0 && most >= least)) {
    throw new RangeError(`a reservation takes 0 <= least <= most points, not least ${least} and most ${most}`);
  }
}

export function checkPoints(points: number): void {
  if (!Number.isFinite(points)) throw new RangeError(`points given are a finite number, not ${points}`);
}
