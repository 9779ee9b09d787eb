import { hkdfSync } from 'node:crypto';

/**
 * The provider's cookie-signing keys, derived from the private signing key (HKDF-SHA256) rather than
 * configured separately: every instance that shares the signing key agrees on them, and rotating the
 * signing key rotates them too. `secret` is the key's private material (e.g. a JWK's `d`).
 */
export function deriveCookieKeys(secret: string): string[] {
  return [Buffer.from(hkdfSync('sha256', secret, 'latchkey', 'oidc-provider cookie keys v1', 32)).toString('base64url')];
}
