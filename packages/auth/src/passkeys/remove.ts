import { and, eq, passkeys, type Database } from '@latchkey/db';

/**
 * Deletes one of the account's passkeys; false when the account has no passkey with this id (someone
 * else's included). The credential stays on the authenticator but signs nobody in from now on. Whether
 * the last sign-in method may be removed is the caller's rule to apply before calling.
 */
export async function removePasskey(db: Database, userId: string, id: string): Promise<boolean> {
  const removed = await db
    .delete(passkeys)
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, userId)))
    .returning({ id: passkeys.id });
  return removed.length > 0;
}
