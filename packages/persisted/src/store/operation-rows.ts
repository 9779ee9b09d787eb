import { and, count, desc, eq, gte, persistedOperations, sql, type Database } from '@latchkey/db';
import type { PersistedSource } from './types.js';

// The statements of the persisted-operation store on the `persisted_operations` table (its cache is the store's).

/** The row of `hash`, marked used in the same statement; undefined when there is none. */
export async function readAndTouchRow(db: Database, hash: string): Promise<{ query: string; source: PersistedSource } | undefined> {
  const [row] = await db
    .update(persistedOperations)
    .set({ lastUsedAt: sql`now()` })
    .where(eq(persistedOperations.hash, hash))
    .returning({ query: persistedOperations.query, source: persistedOperations.source });
  return row;
}

/** Whether the row of `hash` is still there, and its source: a read, no write. */
export async function readSource(db: Database, hash: string): Promise<PersistedSource | undefined> {
  const [row] = await db.select({ source: persistedOperations.source }).from(persistedOperations).where(eq(persistedOperations.hash, hash));
  return row?.source;
}

/** Marks the row of `hash` used now. */
export async function touchRow(db: Database, hash: string): Promise<void> {
  await db.update(persistedOperations).set({ lastUsedAt: sql`now()` }).where(eq(persistedOperations.hash, hash));
}

/**
 * Registers an APQ operation (a known hash changes nothing). After a new one, the APQ rows beyond `maxRegistrations`
 * go, least recently used first (allowlist rows never do), so the table stays bounded.
 */
export async function insertRegistration(db: Database, hash: string, query: string, maxRegistrations: number): Promise<void> {
  const inserted = await db
    .insert(persistedOperations)
    .values({ hash, query, source: 'apq' })
    .onConflictDoNothing()
    .returning({ hash: persistedOperations.hash });
  if (inserted.length === 0) return;
  await db.execute(sql`
    delete from ${persistedOperations} where ${persistedOperations.hash} in (
      select ${persistedOperations.hash} from ${persistedOperations}
      where ${persistedOperations.source} = 'apq'
      order by ${persistedOperations.lastUsedAt} desc, ${persistedOperations.createdAt} desc
      offset ${maxRegistrations}
    )`);
}

/** How many rows the table holds, by source. */
export async function countRowsBySource(db: Database): Promise<Record<PersistedSource, number>> {
  const totals: Record<PersistedSource, number> = { apq: 0, allowlist: 0 };
  const rows = await db
    .select({ source: persistedOperations.source, n: count() })
    .from(persistedOperations)
    .groupBy(persistedOperations.source);
  for (const row of rows) totals[row.source as PersistedSource] = Number(row.n);
  return totals;
}

/** The APQ registrations a client used at or after `since` (a registration is a use), most recent first. */
export function listRegistrationsUsedSince(db: Database, since: Date): Promise<{ hash: string; query: string; lastUsedAt: Date }[]> {
  return db
    .select({ hash: persistedOperations.hash, query: persistedOperations.query, lastUsedAt: persistedOperations.lastUsedAt })
    .from(persistedOperations)
    .where(and(eq(persistedOperations.source, 'apq'), gte(persistedOperations.lastUsedAt, since)))
    .orderBy(desc(persistedOperations.lastUsedAt));
}
