import { lte } from 'drizzle-orm';
import type { Database } from '../client.js';
import { dpopProofUses } from '../schema/index.js';

/** Records a proof's use: true the first time `key` is seen (by any instance), false for a replay. One statement. */
export async function recordDpopProofUse(db: Database, key: string, expiresAt: Date): Promise<boolean> {
  const inserted = await db.insert(dpopProofUses).values({ key, expiresAt }).onConflictDoNothing().returning({ key: dpopProofUses.key });
  return inserted.length === 1;
}

/** Removes uses of proofs that are too old to be accepted anyway; returns how many. */
export async function purgeDpopProofUses(db: Database, now = new Date()): Promise<number> {
  const removed = await db.delete(dpopProofUses).where(lte(dpopProofUses.expiresAt, now)).returning({ key: dpopProofUses.key });
  return removed.length;
}
