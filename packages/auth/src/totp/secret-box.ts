import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { TotpError } from './errors.js';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The key that encrypts TOTP secrets at rest, derived (HKDF-SHA256) from a server secret rather than
 * configured separately, like the provider's cookie keys. Rotating `secret` makes every stored TOTP secret
 * unreadable: users would have to enrol again.
 */
export function deriveTotpKey(secret: string): Uint8Array {
  if (secret.length === 0) throw new TypeError('secret must not be empty');
  return new Uint8Array(hkdfSync('sha256', secret, 'latchkey', 'latchkey totp secrets v1', KEY_BYTES));
}

/**
 * AES-256-GCM; stored as base64url(iv 12 | tag 16 | ciphertext). The user id is authenticated data, so a
 * ciphertext copied onto another account's row does not decrypt.
 */
export function sealTotpSecret(key: Uint8Array, userId: string, secret: string): string {
  checkKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(additionalData(userId));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
}

/**
 * Inverse of sealTotpSecret. A secret that does not open (sealed under another key, or for another user, or
 * damaged) is TOTP_SECRET_UNREADABLE: a refusal the caller answers, never a server error.
 */
export function openTotpSecret(key: Uint8Array, userId: string, sealed: string): string {
  checkKey(key);
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length <= IV_BYTES + TAG_BYTES) throw new TotpError('TOTP_SECRET_UNREADABLE');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(additionalData(userId));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new TotpError('TOTP_SECRET_UNREADABLE');
  }
}

function checkKey(key: Uint8Array): void {
  if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) throw new TypeError('key must be 32 bytes (see deriveTotpKey)');
}

function additionalData(userId: string): Buffer {
  return Buffer.from(`latchkey totp v1:${userId}`, 'utf8');
}
