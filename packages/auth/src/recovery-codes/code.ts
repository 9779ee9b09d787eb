import { createHash, randomInt } from 'node:crypto';

/**
 * Crockford's base32 alphabet, lower-case: no i, l, o or u, so what is shown cannot be misread, and 32
 * symbols give exactly 5 bits each: 12 symbols = 60 bits per code.
 */
export const RECOVERY_CODE_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const GROUPS = 3;
const GROUP_LENGTH = 4;
const SYMBOLS = GROUPS * GROUP_LENGTH;
const NORMALISED = /^[0-9a-hjkmnp-tv-z]{12}$/;

/** A new code, `xxxx-xxxx-xxxx`. */
export function newRecoveryCode(): string {
  let symbols = '';
  for (let i = 0; i < SYMBOLS; i += 1) symbols += RECOVERY_CODE_ALPHABET[randomInt(RECOVERY_CODE_ALPHABET.length)];
  return symbols.match(new RegExp(`.{${GROUP_LENGTH}}`, 'g'))!.join('-');
}

/**
 * What is compared: lower-case, without hyphens or white space, with the letters people type for the
 * digits mapped back (o -> 0, i and l -> 1). Null when the result cannot be a code.
 */
export function normaliseRecoveryCode(input: unknown): string | null {
  if (typeof input !== 'string' || input.length > 64) return null;
  const normalised = input.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
  return NORMALISED.test(normalised) ? normalised : null;
}

/**
 * SHA-256 of the normalised code, with the user id in front: the same code would hash differently for
 * another account, and a leaked table cannot be attacked for all accounts at once.
 */
export function hashRecoveryCode(userId: string, normalised: string): string {
  return createHash('sha256').update(`latchkey recovery code v1:${userId}:${normalised}`).digest('base64url');
}
