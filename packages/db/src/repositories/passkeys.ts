import { asc, eq, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { reusableRead } from '../prepared.js';
import { passkeys, type PasskeyRow } from '../schema/index.js';

// Read on a request path (an account's passkeys on the account page and the dashboard's `me`): built once.
const passkeysOfUser = reusableRead<{ userId: string }, PasskeyRow[]>('passkeys_of_user', (db) =>
  db
    .select()
    .from(passkeys)
    .where(eq(passkeys.userId, sql.placeholder('userId')))
    .orderBy(asc(passkeys.createdAt), asc(passkeys.id)),
);

/** An account's passkeys, oldest first (the id breaks ties), for every RP ID, in one statement. */
export async function listPasskeysOfUser(db: Database, userId: string): Promise<PasskeyRow[]> {
  return passkeysOfUser(db, { userId });
}
