import type { PasskeyRow } from '@latchkey/db';
import { PasskeyError } from './errors.js';
import type { PasskeySummary } from './types.js';

export const MAX_LABEL_LENGTH = 64;

export function toSummary(row: PasskeyRow): PasskeySummary {
  return {
    id: row.id,
    label: row.label,
    deviceType: row.deviceType,
    backedUp: row.backedUp,
    transports: row.transports,
    aaguid: row.aaguid,
    rpId: row.rpId,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
  };
}

/**
 * A label as stored: trimmed, 1 to 64 characters counted as PostgreSQL's char_length counts them (code
 * points, so an emoji is one), and no control characters (they would garble the list it is shown in).
 */
export function normalizeLabel(label: string): string {
  const trimmed = typeof label === 'string' ? label.trim() : '';
  const length = [...trimmed].length;
  if (length < 1 || length > MAX_LABEL_LENGTH || /\p{Cc}/u.test(trimmed)) throw new PasskeyError('PASSKEY_LABEL_INVALID');
  return trimmed;
}

/** A credential id as WebAuthn reports it (base64url); anything else is no passkey's id. */
export function isPasskeyId(id: unknown): id is string {
  return typeof id === 'string' && /^[A-Za-z0-9_-]{1,1024}$/.test(id);
}
