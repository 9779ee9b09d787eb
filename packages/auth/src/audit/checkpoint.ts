import { CompactSign, compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import type { SigningKey } from '../keys/key-material.js';

// A checkpoint: the chain's head (seq and MAC) signed with the signing key, as a compact JWS. Logged every minute
// and by `audit export`, stored as the anchor of a retention purge; `audit verify --checkpoint FILE` proves that
// the chain still reaches it (a tail cut off after it is found).

const CHECKPOINT_TYPE = 'latchkey-audit-checkpoint';

export interface AuditCheckpoint {
  seq: number;
  mac: string;
}

export async function signCheckpoint(signing: SigningKey, head: AuditCheckpoint): Promise<string> {
  const payload = new TextEncoder().encode(JSON.stringify({ seq: head.seq, mac: head.mac, iat: Math.floor(Date.now() / 1000) }));
  return new CompactSign(payload).setProtectedHeader({ alg: signing.alg, kid: signing.kid, typ: CHECKPOINT_TYPE }).sign(signing.key);
}

/** The first compact JWS in `text` (a file may hold the JWS alone, or the line it was printed on). */
export function findCheckpointJws(text: string): string | undefined {
  return /[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/.exec(text)?.[0];
}

/** The checkpoint a JWS holds, when one of these keys signed it; undefined otherwise. */
export async function readCheckpoint(jws: string, jwks: JSONWebKeySet): Promise<AuditCheckpoint | undefined> {
  try {
    const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(jwks));
    if (protectedHeader.typ !== CHECKPOINT_TYPE) return undefined;
    const claims = JSON.parse(new TextDecoder().decode(payload)) as { seq?: unknown; mac?: unknown };
    if (!Number.isSafeInteger(claims.seq) || typeof claims.mac !== 'string') return undefined;
    return { seq: claims.seq as number, mac: claims.mac };
  } catch {
    return undefined;
  }
}
