import { InvalidInputError } from './errors.js';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Ids are UUIDs; token subjects minted for scripts need not be. Never send a non-uuid to a uuid column. */
export function isUuid(value) {
    return UUID.test(value);
}
export function requireId(value, field, what = 'a document id') {
    if (!isUuid(value))
        throw new InvalidInputError(`${field.at(-1)} must be ${what} (a UUID).`, field);
    return value.toLowerCase();
}
export function requireSlug(value, field) {
    if (!SLUG.test(value))
        throw new InvalidInputError(`${field.at(-1)} must be 1-63 lower-case letters, digits or hyphens.`, field);
    return value;
}
/** Length in characters (code points), as PostgreSQL's char_length counts them. */
export function requireText(value, field, { min = 0, max }) {
    const length = [...value].length;
    if (length < min || length > max) {
        throw new InvalidInputError(min > 0 ? `${field.at(-1)} must be ${min}-${max} characters.` : `${field.at(-1)} must be at most ${max} characters.`, field);
    }
    // PostgreSQL text cannot hold NUL; refuse it here rather than fail in the driver.
    if (value.includes('\u0000'))
        throw new InvalidInputError(`${field.at(-1)} must not contain NUL characters.`, field);
    return value;
}
/** Years 1-9999: what an RFC 3339 date-time can say and PostgreSQL stores (it refuses year 0). */
export function isStorable(value) {
    const year = value.getUTCFullYear();
    return !Number.isNaN(value.getTime()) && year >= 1 && year <= 9999;
}
export function requireDate(value, field) {
    if (!isStorable(value))
        throw new InvalidInputError(`${field.at(-1)} must be a valid date-time between the years 1 and 9999.`, field);
    return value;
}
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|([+-])(\d{2}):(\d{2}))$/;
/**
 * An RFC 3339 date-time with a time zone, taken literally: JavaScript would roll 2026-02-30 over to March and
 * accept 24:00 or a +99:00 offset; those are refused here, as are years PostgreSQL cannot store.
 */
export function parseDateTime(text) {
    const match = DATE_TIME.exec(text);
    if (!match)
        return null;
    const [, y, mo, d, h, mi, s = '0', sign, oh = '0', om = '0'] = match;
    if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59 || Number(oh) > 23 || Number(om) > 59)
        return null;
    const date = new Date(text);
    if (!isStorable(date))
        return null;
    // Read the calendar day back in the string's own offset: it must be the day the string names.
    const offsetMinutes = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
    const local = new Date(date.getTime() + offsetMinutes * 60_000);
    return local.getUTCFullYear() === Number(y) && local.getUTCMonth() + 1 === Number(mo) && local.getUTCDate() === Number(d) ? date : null;
}
//# sourceMappingURL=validate.js.map