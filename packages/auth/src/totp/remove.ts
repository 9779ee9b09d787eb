import { eq, totpCredentials, type Database } from '@latchkey/db';

/**
 * Removes the account's authenticator app, confirmed or pending; false when there was none. Whether the
 * account may lose this factor (and whether its recovery codes go too) is the caller's rule to apply first.
 */
export async function removeTotp(db: Database, userId: string): Promise<boolean> {
  const removed = await db.delete(totpCredentials).where(eq(totpCredentials.userId, userId)).returning({ userId: totpCredentials.userId });
  return removed.length > 0;
}
