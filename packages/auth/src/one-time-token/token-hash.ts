import { createHash, randomBytes } from 'node:crypto';

/** 256 bits from the CSPRNG, base64url: 43 characters. */
export const TOKEN_BYTES = 32;
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export function newTokenValue(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

export function isTokenShaped(value: string): boolean {
  return TOKEN_FORMAT.test(value);
}

/**
 * What the database keeps instead of the token. A 256-bit random value needs no salt or slow hash: there is
 * nothing to guess, and a stolen table yields no usable token.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** E-mail usernames compare lower-cased and trimmed. */
export function normalizeUsername(username: string): string {
  return username.trim().toLowerCase();
}
