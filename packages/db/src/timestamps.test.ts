import { describe, expect, it } from 'vitest';
import { decodeTimestamptz } from './timestamps.js';

// drizzle decodes a timestamptz with `new Date(text)`: the fast path must give the same instant for every text
// PostgreSQL prints, and every other text must still reach Date's own parser.
const sameAsDate = (text: string) => expect(decodeTimestamptz(text).getTime(), text).toEqual(new Date(text).getTime());

describe('decodeTimestamptz reads PostgreSQL timestamps exactly as new Date(text) does', () => {
  it('UTC text with 0 to 6 fraction digits, with a space or a T, +00 or +00:00', () => {
    const random = (below: number) => Math.floor(Math.random() * below);
    const two = (value: number) => String(value).padStart(2, '0');
    for (let round = 0; round < 2000; round++) {
      const date = `${1000 + random(9000)}-${two(1 + random(12))}-${two(1 + random(28))}`;
      const time = `${two(random(24))}:${two(random(60))}:${two(random(60))}`;
      const fraction =
        round % 7 === 0
          ? ''
          : `.${String(random(1_000_000))
              .padStart(6, '0')
              .slice(0, 1 + (round % 6))}`;
      sameAsDate(`${date} ${time}${fraction}+00`);
      sameAsDate(`${date}T${time}${fraction}+00:00`);
    }
  });

  it('the edges of the fast path: first and last instants, a missing fraction digit, the last day of a month', () => {
    for (const text of [
      '1000-01-01 00:00:00+00',
      '9999-12-31 23:59:59.999999+00',
      '2026-11-24 10:00:00.5+00',
      '2026-11-24 10:00:00.05+00',
      '2024-02-29 12:00:00.001+00',
      '2026-11-24T10:00:00+00:00',
    ]) {
      sameAsDate(text);
    }
  });

  it('every day of common, leap and century years, at both ends of the day (the day count is computed, not asked of Date.UTC)', () => {
    const two = (value: number) => String(value).padStart(2, '0');
    for (const year of [1000, 1582, 1600, 1700, 1900, 1969, 1970, 2000, 2023, 2024, 2100, 2400, 9999]) {
      for (let day = new Date(Date.UTC(year, 0, 1)); day.getUTCFullYear() === year; day = new Date(day.getTime() + 86_400_000)) {
        const date = `${year}-${two(day.getUTCMonth() + 1)}-${two(day.getUTCDate())}`;
        sameAsDate(`${date} 00:00:00+00`);
        sameAsDate(`${date}T23:59:59.999999+00:00`);
      }
    }
  });

  it('any other text goes to the general parser: offsets, other years, BC, infinity, too many digits, garbage', () => {
    for (const text of [
      '2026-11-24 10:00:00+05:30',
      '2026-11-24 10:00:00-08',
      '2026-11-24 10:00:00.123+01',
      '0999-12-31 23:59:59+00',
      '10000-01-01 00:00:00+00',
      '2026-11-24 10:00:00 BC+00',
      '2026-11-24 10:00:00.1234567+00',
      '2026-11-24 10:00:0x+00',
      '2026-13-24 10:00:00+00',
      '2026-11-24 24:00:00+00',
      'infinity',
      '-infinity',
      '',
    ]) {
      const decoded = decodeTimestamptz(text);
      const expected = new Date(text);
      expect(Number.isNaN(decoded.getTime()) ? 'Invalid Date' : decoded.getTime(), text).toEqual(
        Number.isNaN(expected.getTime()) ? 'Invalid Date' : expected.getTime(),
      );
    }
  });
});
