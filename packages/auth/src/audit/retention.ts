import { auditChainHead, lastAuditEventBefore, lockAuditChain, purgeAuditEventsThrough, type Database } from '@latchkey/db';
import type { SigningKey } from '../keys/key-material.js';
import { signCheckpoint } from './checkpoint.js';

/** The chain's head and its signed checkpoint (undefined before the first event). */
export async function checkpointAuditHead(
  db: Database,
  signing: SigningKey,
): Promise<{ seq: number; mac: string; checkpoint: string } | undefined> {
  const head = await auditChainHead(db);
  return head && { seq: head.seq, mac: head.mac, checkpoint: await signCheckpoint(signing, head) };
}

/**
 * Retention (AUDIT_RETENTION): rows written before `before` go, but only once the last of them (the first kept
 * row's predecessor) is anchored: its `seq` and MAC, signed as a checkpoint, are stored in the same transaction,
 * under the chain's lock, before the delete. Verification then starts from that anchor.
 */
export async function purgeAuditTrail(
  db: Database,
  { signing, before }: { signing: SigningKey; before: Date },
): Promise<{ purged: number; anchor?: { seq: number; mac: string; checkpoint: string } }> {
  return db.transaction(async (tx) => {
    await lockAuditChain(tx);
    const last = await lastAuditEventBefore(tx, before);
    if (!last) return { purged: 0 };
    const anchor = { seq: last.seq, mac: last.mac, checkpoint: await signCheckpoint(signing, last) };
    return { purged: await purgeAuditEventsThrough(tx, anchor), anchor };
  });
}
