import type { PasskeyRelyingParty } from './types.js';

/**
 * A misconfigured relying party is a programming error, caught before any ceremony: an empty origin list
 * would make verification refuse everything, a path or trailing slash in an origin never matches the
 * browser's `origin`.
 */
export function checkRelyingParty(rp: PasskeyRelyingParty): void {
  if (typeof rp.id !== 'string' || rp.id.length === 0 || rp.id !== rp.id.toLowerCase() || rp.id.includes(':') || rp.id.includes('/')) {
    throw new TypeError('rp.id must be a lower-case host name without scheme or port');
  }
  if (typeof rp.name !== 'string' || rp.name.length === 0) throw new TypeError('rp.name must be a non-empty string');
  if (!Array.isArray(rp.origins) || rp.origins.length === 0) throw new TypeError('rp.origins must list at least one origin');
  for (const origin of rp.origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== origin)
      throw new TypeError('each of rp.origins must be an origin such as https://example.com or http://localhost:3000');
  }
}
