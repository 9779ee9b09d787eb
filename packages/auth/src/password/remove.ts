import { eq, passwordCredentials, type Database } from '@latchkey/db';

/**
 * Removes the account's password; false when there was none. Whether the account may lose this factor is the
 * caller's rule to apply first.
 */
export async function removePassword(db: Database, userId: string): Promise<boolean> {
  const removed = await db
    .delete(passwordCredentials)
    .where(eq(passwordCredentials.userId, userId))
    .returning({ userId: passwordCredentials.userId });
  return removed.length > 0;
}
