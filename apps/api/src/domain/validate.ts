import { InvalidInputError } from './errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Ids are UUIDs; token subjects minted for scripts need not be. Never send a non-uuid to a uuid column. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export function requireId(value: string, field: string[], what = 'a document id'): string {
  if (!isUuid(value)) throw new InvalidInputError(`${field.at(-1)} must be ${what} (a UUID).`, field);
  return value.toLowerCase();
}

export function requireSlug(value: string, field: string[]): string {
  if (!SLUG.test(value)) throw new InvalidInputError(`${field.at(-1)} must be 1-63 lower-case letters, digits or hyphens.`, field);
  return value;
}

/** Length in characters (code points), as PostgreSQL's char_length counts them. */
export function requireText(value: string, field: string[], { min = 0, max }: { min?: number; max: number }): string {
  const length = [...value].length;
  if (length < min || length > max) {
    throw new InvalidInputError(min > 0 ? `${field.at(-1)} must be ${min}-${max} characters.` : `${field.at(-1)} must be at most ${max} characters.`, field);
  }
  // PostgreSQL text cannot hold NUL; refuse it here rather than fail in the driver.
  if (value.includes('\u0000')) throw new InvalidInputError(`${field.at(-1)} must not contain NUL characters.`, field);
  return value;
}

export function requireDate(value: Date, field: string[]): Date {
  if (Number.isNaN(value.getTime())) throw new InvalidInputError(`${field.at(-1)} must be a valid date-time.`, field);
  return value;
}
