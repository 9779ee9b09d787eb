import { and, asc, desc, eq, gt, gte, inArray, lt, lte, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { auditAnchors, auditEvents, type AuditAnchorRow, type AuditEventRow } from '../schema/index.js';

/** The advisory lock every writer of the audit chain holds for its transaction: one writer at a time, one chain. */
const AUDIT_CHAIN_LOCK_KEY = 7_205_117_001;

/** Inside the writer's transaction: waits for the chain (released at commit or rollback). */
export async function lockAuditChain(tx: Database): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${AUDIT_CHAIN_LOCK_KEY}::bigint)`);
}

/** The newest row's `seq` and `mac`; else the newest anchor's (everything was purged); else undefined (no chain yet). */
export async function auditChainHead(db: Database): Promise<{ seq: number; mac: string } | undefined> {
  const [row] = await db.select({ seq: auditEvents.seq, mac: auditEvents.mac }).from(auditEvents).orderBy(desc(auditEvents.seq)).limit(1);
  return row ?? (await latestAuditAnchor(db));
}

export async function insertAuditEvents(tx: Database, rows: AuditEventRow[]): Promise<void> {
  if (rows.length > 0) await tx.insert(auditEvents).values(rows);
}

/** Rows after `afterSeq` (and at or after `since`, when given), in chain order. */
export async function listAuditEvents(db: Database, query: { afterSeq: number; limit: number; since?: Date }): Promise<AuditEventRow[]> {
  const after = gt(auditEvents.seq, query.afterSeq);
  return db
    .select()
    .from(auditEvents)
    .where(query.since ? and(after, gte(auditEvents.time, query.since)) : after)
    .orderBy(asc(auditEvents.seq))
    .limit(query.limit);
}

/** The anchor with the highest `seq`: where verification starts once the chain's beginning is purged. */
export async function latestAuditAnchor(db: Database): Promise<AuditAnchorRow | undefined> {
  const [anchor] = await db.select().from(auditAnchors).orderBy(desc(auditAnchors.seq)).limit(1);
  return anchor;
}

/** The last row written before `cutoff`: what retention would purge through. */
export async function lastAuditEventBefore(db: Database, cutoff: Date): Promise<{ seq: number; mac: string } | undefined> {
  const [row] = await db
    .select({ seq: auditEvents.seq, mac: auditEvents.mac })
    .from(auditEvents)
    .where(lt(auditEvents.time, cutoff))
    .orderBy(desc(auditEvents.seq))
    .limit(1);
  return row;
}

/** Stores the anchor of a purge, then purges through it: in the caller's transaction, in that order. */
export async function purgeAuditEventsThrough(tx: Database, anchor: { seq: number; mac: string; checkpoint: string }): Promise<number> {
  await tx.insert(auditAnchors).values(anchor).onConflictDoNothing();
  const purged = await tx.delete(auditEvents).where(lte(auditEvents.seq, anchor.seq)).returning({ seq: auditEvents.seq });
  return purged.length;
}

/** The newest `limit` events of these types that concern `subject` (the account page's sign-in history). */
export async function listAuditEventsOf(db: Database, subject: string, types: readonly string[], limit: number): Promise<AuditEventRow[]> {
  return db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.subject, subject), inArray(auditEvents.type, [...types])))
    .orderBy(desc(auditEvents.seq))
    .limit(limit);
}
