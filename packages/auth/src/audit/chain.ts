import { createHmac, hkdfSync, timingSafeEqual, type KeyObject } from 'node:crypto';

// The chain: each row's MAC is the HMAC-SHA256 of its content and the previous row's MAC, keyed by a key derived
// (HKDF) from the signing key. The key never reaches the database, so whoever can only write the database cannot
// make a row that verifies; whoever holds the signing key can (docs/audit.md).

/** The MAC before the first row. */
export const GENESIS = { seq: 0, mac: '' } as const;

/** A row's chained content: every column but the MAC. */
export interface ChainedContent {
  seq: number;
  time: Date;
  type: string;
  actor: string | null;
  subject: string | null;
  address: string | null;
  userAgent: string | null;
  requestId: string | null;
  details: unknown;
}

/** The audit chain's HMAC key: HKDF-SHA256 of the signing key's PKCS#8 bytes, for this purpose only. */
export function deriveAuditKey(signingKey: KeyObject): Buffer {
  const material = signingKey.export({ format: 'der', type: 'pkcs8' });
  return Buffer.from(hkdfSync('sha256', material, 'latchkey', 'latchkey audit chain v1', 32));
}

/** JSON with object keys sorted at every level: PostgreSQL's jsonb keeps no key order, so the MAC must not depend on it. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function macOf(key: Buffer, row: ChainedContent, previousMac: string): string {
  const content = canonicalJson([
    row.seq,
    row.time.toISOString(),
    row.type,
    row.actor,
    row.subject,
    row.address,
    row.userAgent,
    row.requestId,
    row.details,
  ]);
  return createHmac('sha256', key).update(previousMac).update('\n').update(content).digest('base64url');
}

/** Whether `row` carries the MAC its content and `previousMac` give. */
export function macMatches(key: Buffer, row: ChainedContent & { mac: string }, previousMac: string): boolean {
  const expected = Buffer.from(macOf(key, row, previousMac));
  const actual = Buffer.from(row.mac);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
