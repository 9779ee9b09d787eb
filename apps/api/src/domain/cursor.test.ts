import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, type DocumentCursor } from './cursor.js';

/** The cursor's definition: base64url of the JSON array `[createdAt, id]`, what clients may hold across deploys. */
const general = ({ createdAt, id }: DocumentCursor) => Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');

const id = '5f0c1f9e-0000-4000-8000-000000000001';

describe('Keyset paging: a cursor is the same text however it is encoded', () => {
  it("PostgreSQL's timestamp forms (microseconds, offsets, a space or a T) encode as JSON.stringify writes them, and decode back", () => {
    for (const createdAt of [
      '2026-11-22 05:41:56.974123+00',
      '2026-11-22 05:41:56+00',
      '2026-11-22 05:41:56.9+05:30',
      '1969-12-31 23:59:59.999999-08',
      '2026-11-22T05:41:56.974123+00:00',
    ]) {
      const cursor = { createdAt, id };
      expect(encodeCursor(cursor)).toBe(general(cursor));
      if (!createdAt.includes('T')) expect(decodeCursor(encodeCursor(cursor), ['after'])).toEqual(cursor);
    }
  });

  it('text that JSON escapes or that is not one byte a character takes the general path, with the same answer', () => {
    for (const createdAt of ['quote " here', 'back\\slash', 'tab\there', 'é accent', '雪', 'emoji 😀', '', 'x'.repeat(300)]) {
      const cursor = { createdAt, id };
      expect(encodeCursor(cursor)).toBe(general(cursor));
    }
  });

  it('successive cursors do not share what they were written in', () => {
    const first = encodeCursor({ createdAt: '2026-11-22 05:41:56.974123+00', id });
    const second = encodeCursor({ createdAt: '2026-11-22 05:41:57+00', id: 'ffffffff-ffff-4fff-bfff-ffffffffffff' });
    expect(decodeCursor(first, ['after'])).toEqual({ createdAt: '2026-11-22 05:41:56.974123+00', id });
    expect(decodeCursor(second, ['after']).id).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
  });
});
