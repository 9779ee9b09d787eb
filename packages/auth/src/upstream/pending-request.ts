import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** How long a browser may take at the upstream provider before its callback is refused. */
export const UPSTREAM_REQUEST_TTL_SECONDS = 600;

/** What a sign-in at the upstream provider is for. */
export type UpstreamPurpose = 'sign-in' | 'link';

/**
 * An authorization request this browser sent to the upstream provider, and what its callback is checked
 * against: `state` (the callback belongs to this browser's request), `nonce` (the ID token was issued for it)
 * and the PKCE verifier (only this browser's request can redeem the code).
 */
export interface PendingUpstreamRequest {
  purpose: UpstreamPurpose;
  state: string;
  nonce: string;
  codeVerifier: string;
  /** link: the account that asked for the link */
  userId?: string;
  /** seconds since the epoch */
  expiresAt: number;
}

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const AAD = Buffer.from('latchkey upstream request v1', 'utf8');
const RANDOM = /^[A-Za-z0-9_-]{22,128}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_SEALED = 2048;

/**
 * The key that seals pending upstream requests into the browser's cookie, derived (HKDF-SHA256) from a server
 * secret, so every instance that shares the signing key can open what another sealed.
 */
export function deriveUpstreamRequestKey(secret: string): Uint8Array {
  if (secret.length === 0) throw new TypeError('secret must not be empty');
  return new Uint8Array(hkdfSync('sha256', secret, 'latchkey', 'latchkey upstream requests v1', KEY_BYTES));
}

/** AES-256-GCM over the request as JSON; base64url(iv 12 | tag 16 | ciphertext). Neither readable nor forgeable. */
export function sealUpstreamRequest(key: Uint8Array, request: PendingUpstreamRequest): string {
  checkKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(AAD);
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(request), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
}

/**
 * The request sealed in `sealed`, or null when there is none: missing, malformed, sealed under another key,
 * tampered with, or expired.
 */
export function openUpstreamRequest(key: Uint8Array, sealed: string | undefined, now = Date.now()): PendingUpstreamRequest | null {
  checkKey(key);
  if (!sealed || sealed.length > MAX_SEALED || !/^[A-Za-z0-9_-]+$/.test(sealed)) return null;
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
  let value: unknown;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(AAD);
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    value = JSON.parse(Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8'));
  } catch {
    return null;
  }
  if (!isPendingRequest(value)) return null;
  return value.expiresAt * 1000 > now ? value : null;
}

function isPendingRequest(value: unknown): value is PendingUpstreamRequest {
  if (typeof value !== 'object' || value === null) return false;
  const request = value as Record<string, unknown>;
  return (
    (request['purpose'] === 'sign-in' ||
      (request['purpose'] === 'link' && typeof request['userId'] === 'string' && UUID.test(request['userId']))) &&
    [request['state'], request['nonce'], request['codeVerifier']].every((item) => typeof item === 'string' && RANDOM.test(item)) &&
    typeof request['expiresAt'] === 'number' &&
    Number.isInteger(request['expiresAt'])
  );
}

function checkKey(key: Uint8Array): void {
  if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) throw new TypeError('key must be 32 bytes (see deriveUpstreamRequestKey)');
}
