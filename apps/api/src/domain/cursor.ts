import { InvalidInputError } from './errors.js';
import { isUuid } from './validate.js';

/**
 * Keyset position in the (created_at DESC, id DESC) order. `createdAt` is PostgreSQL's own text form of the
 * timestamp: a JavaScript Date would drop the microseconds and skip or repeat rows.
 */
export interface DocumentCursor {
  createdAt: string;
  id: string;
}

/** PostgreSQL's ISO output for timestamptz, e.g. `2026-11-22 05:41:56.974123+00` or `...+05:30`. */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?([+-])(\d{2})(?::(\d{2}))?$/;

/** Exactly what PostgreSQL could have printed: a real calendar day, years 1-9999, offsets within +-15:59. */
function isTimestamp(text: string): boolean {
  const match = TIMESTAMP.exec(text);
  if (!match) return false;
  const [y, mo, d, h, mi, s, oh, om] = [1, 2, 3, 4, 5, 6, 8, 9].map((i) => Number(match[i] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59 || oh > 15 || om > 59) return false;
  // Day 0 of the next month is the last day of this one (leap years included).
  return d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

/** Characters that JSON writes as they are, and that are one byte each in UTF-8 as in latin1. */
const PLAIN = /^[0-9A-Za-z .:+-]*$/;
/** Where a cursor's JSON text is written to be encoded: one buffer, reused, rather than a Buffer per row of a page. */
const scratch = Buffer.allocUnsafe(256);

/**
 * The cursor is the base64url of the JSON array `[createdAt, id]`. PostgreSQL's timestamp text and a uuid need no
 * escaping, so their JSON text is written directly into `scratch`: a page encodes one cursor per row, and a Buffer
 * made for each was the most allocated object of a page after its rows (the same text either way; anything else
 * takes the general path).
 */
export function encodeCursor(cursor: DocumentCursor): string {
  const { createdAt, id } = cursor;
  if (createdAt.length + id.length > 200 || !PLAIN.test(createdAt) || !PLAIN.test(id)) {
    return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
  }
  const length = scratch.write(`["${createdAt}","${id}"]`, 0, 'latin1');
  return scratch.toString('base64url', 0, length);
}

/** Anything but a cursor this service produced is BAD_USER_INPUT, never a database error. */
export function decodeCursor(value: string, field: string[]): DocumentCursor {
  const invalid = () => new InvalidInputError(`${field.at(-1)} is not a cursor from this connection.`, field);
  if (value.length === 0 || value.length > 200 || !/^[A-Za-z0-9_-]+$/.test(value)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid();
  const [createdAt, id] = parsed as unknown[];
  if (typeof createdAt !== 'string' || typeof id !== 'string' || !isTimestamp(createdAt) || !isUuid(id)) throw invalid();
  return { createdAt, id };
}
