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

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2})?|Z)$/;

export function encodeCursor(cursor: DocumentCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');
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
  if (typeof createdAt !== 'string' || typeof id !== 'string' || !TIMESTAMP.test(createdAt) || !isUuid(id)) throw invalid();
  if (Number.isNaN(Date.parse(createdAt.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00')))) throw invalid();
  return { createdAt, id };
}
