import { eq, lt, providerSessionFactors, type Database } from '@latchkey/db';
import type { FactorGrant } from '../factors/types.js';

/** The factors behind a provider session, stored by the session's uid (stable for the session's life). */
export async function saveSessionFactors(
  db: Database,
  record: { sessionUid: string; userId: string; factors: readonly FactorGrant[]; expiresAt: Date },
): Promise<void> {
  const values = { userId: record.userId, factors: [...record.factors], expiresAt: record.expiresAt, updatedAt: new Date() };
  await db
    .insert(providerSessionFactors)
    .values({ sessionUid: record.sessionUid, ...values })
    .onConflictDoUpdate({ target: providerSessionFactors.sessionUid, set: values });
}

/** The factors behind a session, or null (none recorded, expired, or another account's). */
export async function readSessionFactors(
  db: Database,
  sessionUid: string,
  userId: string,
  now = new Date(),
): Promise<FactorGrant[] | null> {
  const [row] = await db.select().from(providerSessionFactors).where(eq(providerSessionFactors.sessionUid, sessionUid)).limit(1);
  if (!row || row.userId !== userId || row.expiresAt.getTime() <= now.getTime()) return null;
  return row.factors as FactorGrant[];
}

export async function purgeExpiredSessionFactors(db: Database, now = new Date()): Promise<number> {
  const removed = await db
    .delete(providerSessionFactors)
    .where(lt(providerSessionFactors.expiresAt, now))
    .returning({ uid: providerSessionFactors.sessionUid });
  return removed.length;
}
