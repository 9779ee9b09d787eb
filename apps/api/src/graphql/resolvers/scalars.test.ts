import { describe, expect, it } from 'vitest';
import { DateTime } from './scalars.js';

describe('DateTime serializes a date as toISOString does (spec: timestamps are ISO 8601 UTC)', () => {
  it('the same text for any instant from year 1 to 9999, milliseconds of one, two and three digits included', () => {
    const dates = [
      new Date('0001-01-01T00:00:00.000Z'),
      new Date('0999-12-31T23:59:59.999Z'),
      new Date('1000-01-01T00:00:00.000Z'),
      new Date('2026-11-24T10:00:00.005Z'),
      new Date('2026-11-24T10:00:00.050Z'),
      new Date('2026-11-24T10:00:00.500Z'),
      new Date('9999-12-31T23:59:59.999Z'),
    ];
    for (let round = 0; round < 2000; round++) dates.push(new Date(Date.UTC(1000, 0, 1) + Math.random() * 280_000_000_000_000));
    for (const date of dates) expect(DateTime.serialize(date)).toBe(date.toISOString());
  });

  it('a date outside the storable years is refused, not printed', () => {
    expect(() => DateTime.serialize(new Date('+010000-01-01T00:00:00.000Z'))).toThrow(TypeError);
    expect(() => DateTime.serialize(new Date(Number.NaN))).toThrow(TypeError);
  });
});
