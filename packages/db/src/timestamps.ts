import { is } from 'drizzle-orm';
import { PgTimestamp } from 'drizzle-orm/pg-core';

const ZERO = 48;
const isDigit = (code: number) => code >= ZERO && code <= ZERO + 9;

/** The two digits at `at` as a number, or NaN when either is not a digit. */
function twoDigits(text: string, at: number): number {
  const tens = text.charCodeAt(at);
  const ones = text.charCodeAt(at + 1);
  return isDigit(tens) && isDigit(ones) ? (tens - ZERO) * 10 + ones - ZERO : Number.NaN;
}

/**
 * A `timestamptz` as PostgreSQL prints it in a session whose time zone is UTC, `2026-11-24 10:00:00.123456+00`
 * (or, inside `json_build_object`, `2026-11-24T10:00:00.123456+00:00`), read digit by digit into a Date; anything
 * else is answered by `new Date(text)`, which is exactly what drizzle's own decoder does with every value.
 *
 * Why: a page of documents decodes about five timestamps per row (the document's, its organization's, its
 * owner's), and `Date`'s general parser takes its slow path on PostgreSQL's format (a space, an hour-only
 * offset). The digits are read here and the Date is built from `Date.UTC`; like `new Date(text)`, it keeps the
 * milliseconds and drops the microseconds beyond them. Another session time zone, a year of more than four
 * digits, BC or `infinity` all miss the strict pattern below and take the general parser.
 */
export function decodeTimestamptz(text: string): Date {
  const length = text.length;
  // date (10) + separator + time (8) [+ '.' and 1-6 digits] + '+00' [':00']
  const offsetAt = text.charCodeAt(length - 3) === 58 ? length - 6 : length - 3; // ':' of '+00:00'
  if (
    length < 22 ||
    text.charCodeAt(offsetAt) !== 43 || // '+'
    text.charCodeAt(offsetAt + 1) !== ZERO ||
    text.charCodeAt(offsetAt + 2) !== ZERO ||
    (offsetAt === length - 6 && (text.charCodeAt(length - 2) !== ZERO || text.charCodeAt(length - 1) !== ZERO)) ||
    text.charCodeAt(4) !== 45 || // '-'
    text.charCodeAt(7) !== 45 ||
    (text.charCodeAt(10) !== 32 && text.charCodeAt(10) !== 84) || // ' ' or 'T'
    text.charCodeAt(13) !== 58 || // ':'
    text.charCodeAt(16) !== 58
  ) {
    return new Date(text);
  }
  let milliseconds = 0;
  if (offsetAt > 19) {
    // '.' then 1 to 6 digits: the first three are the milliseconds (a missing digit is a zero).
    if (text.charCodeAt(19) !== 46 || offsetAt > 27 || offsetAt < 21) return new Date(text);
    for (let at = 20; at < offsetAt; at++) if (!isDigit(text.charCodeAt(at))) return new Date(text);
    for (let at = 20; at < 23; at++) milliseconds = milliseconds * 10 + (at < offsetAt ? text.charCodeAt(at) - ZERO : 0);
  } else if (offsetAt !== 19) {
    return new Date(text);
  }
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hours = twoDigits(text, 11);
  const minutes = twoDigits(text, 14);
  const seconds = twoDigits(text, 17);
  // Out-of-range fields (month 13, hour 24) would roll over in Date.UTC: such text is left to the general parser.
  if (!(year >= 1000 && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hours <= 23 && minutes <= 59 && seconds <= 59)) {
    return new Date(text);
  }
  return new Date(((daysSinceEpoch(year, month, day) * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000 + milliseconds);
}

/**
 * Days from 1970-01-01 to this day of the proleptic Gregorian calendar (H. Hinnant's `days_from_civil`): what
 * `Date.UTC` computes, as integer arithmetic the JIT compiles inline. `Date.UTC` is a call into V8's runtime that
 * took about a third of the time of decoding a timestamp.
 */
function daysSinceEpoch(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year; // years counted from March: the leap day ends the year
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** How a value of this column is decoded from the driver's text: the fast path for a timestamptz read as a Date. */
export function columnDecoder(column: { mapFromDriverValue(value: unknown): unknown }): (value: unknown) => unknown {
  if (is(column, PgTimestamp) && column.withTimezone) {
    return (value) => (typeof value === 'string' ? decodeTimestamptz(value) : value);
  }
  return (value) => column.mapFromDriverValue(value);
}
