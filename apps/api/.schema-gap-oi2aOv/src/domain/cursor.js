import { InvalidInputError } from './errors.js';
import { isUuid } from './validate.js';
/** PostgreSQL's ISO output for timestamptz, e.g. `2026-11-22 05:41:56.974123+00` or `...+05:30`. */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?([+-])(\d{2})(?::(\d{2}))?$/;
/** Exactly what PostgreSQL could have printed: a real calendar day, years 1-9999, offsets within +-15:59. */
function isTimestamp(text) {
    const match = TIMESTAMP.exec(text);
    if (!match)
        return false;
    const [y, mo, d, h, mi, s, oh, om] = [1, 2, 3, 4, 5, 6, 8, 9].map((i) => Number(match[i] ?? 0));
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59 || oh > 15 || om > 59)
        return false;
    // Day 0 of the next month is the last day of this one (leap years included).
    return d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
}
export function encodeCursor(cursor) {
    return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');
}
/** Anything but a cursor this service produced is BAD_USER_INPUT, never a database error. */
export function decodeCursor(value, field) {
    const invalid = () => new InvalidInputError(`${field.at(-1)} is not a cursor from this connection.`, field);
    if (value.length === 0 || value.length > 200 || !/^[A-Za-z0-9_-]+$/.test(value))
        throw invalid();
    let parsed;
    try {
        parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    }
    catch {
        throw invalid();
    }
    if (!Array.isArray(parsed) || parsed.length !== 2)
        throw invalid();
    const [createdAt, id] = parsed;
    if (typeof createdAt !== 'string' || typeof id !== 'string' || !isTimestamp(createdAt) || !isUuid(id))
        throw invalid();
    return { createdAt, id };
}
//# sourceMappingURL=cursor.js.map