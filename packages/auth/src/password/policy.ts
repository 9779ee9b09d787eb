import type { PasswordErrorCode } from './errors.js';

/** Fewest characters (Unicode code points, after NFKC) a password may have (NIST SP 800-63B: at least 8; 12 here). */
export const PASSWORD_MIN_LENGTH = 12;
/** Most characters (Unicode code points, after NFKC) a password may have: long enough for passphrases, short enough to hash cheaply. */
export const PASSWORD_MAX_LENGTH = 256;

/**
 * The form a password is hashed and checked in: NFKC (NIST SP 800-63B 5.1.1.2), so that the same text typed
 * as precomposed or combining characters (or in full-width forms) is the same password.
 */
export function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}

/** Unicode code points, not UTF-16 units: an emoji counts once. */
export function codePointCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/**
 * The password rule, NIST SP 800-63B style: length only (12 to 256 code points after NFKC), plus not only
 * whitespace and not the account's e-mail address. No composition rules (digits, symbols, ...): they are
 * what that guidance advises against. Returns why the password is refused, or null when it is acceptable.
 */
export function checkPasswordPolicy(password: string, email: string): PasswordErrorCode | null {
  const normalized = normalizePassword(password);
  const length = codePointCount(normalized);
  if (length > PASSWORD_MAX_LENGTH) return 'PASSWORD_TOO_LONG';
  if (length < PASSWORD_MIN_LENGTH) return 'PASSWORD_TOO_WEAK';
  if (normalized.trim() === '') return 'PASSWORD_TOO_WEAK';
  if (normalized.trim().toLowerCase() === normalizePassword(email).trim().toLowerCase()) return 'PASSWORD_TOO_WEAK';
  return null;
}
