import { createHash, randomBytes } from 'node:crypto';

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * A bearer secret: `bytes` from the CSPRNG, base64url without padding. The default 32 bytes (256 bits, 43
 * characters) is what every token, binding and browser id of this package uses.
 */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Whether `value` has the shape `randomToken(bytes)` gives (its length and alphabet): checked before any lookup,
 * so a malformed value costs no query and never reaches the database.
 */
export function isRandomTokenShaped(value: unknown, bytes = 32): value is string {
  return typeof value === 'string' && value.length === Math.ceil((bytes * 4) / 3) && BASE64URL.test(value);
}

/**
 * What a table keeps instead of a random token. A 256-bit random value needs no salt or slow hash: there is
 * nothing to guess, and a stolen table yields no usable token.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
