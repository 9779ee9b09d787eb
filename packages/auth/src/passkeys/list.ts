import { asc, eq, passkeys, type Database } from '@latchkey/db';
import { toSummary } from './summary.js';
import type { PasskeySummary } from './types.js';

/** The account's passkeys, oldest first, for every RP ID (each summary says which). */
export async function listPasskeys(db: Database, userId: string): Promise<PasskeySummary[]> {
  const rows = await db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(asc(passkeys.createdAt), asc(passkeys.id));
  return rows.map(toSummary);
}
