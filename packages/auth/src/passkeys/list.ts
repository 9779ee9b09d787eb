import { listPasskeysOfUser, type Database } from '@latchkey/db';
import { toSummary } from './summary.js';
import type { PasskeySummary } from './types.js';

/** The account's passkeys, oldest first, for every RP ID (each summary says which). */
export async function listPasskeys(db: Database, userId: string): Promise<PasskeySummary[]> {
  return (await listPasskeysOfUser(db, userId)).map(toSummary);
}
