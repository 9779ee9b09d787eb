import { eq, passwordCredentials, type Database } from '@latchkey/db';

/** Whether the account has a password. */
export async function hasPassword(db: Database, userId: string): Promise<boolean> {
  const rows = await db
    .select({ userId: passwordCredentials.userId })
    .from(passwordCredentials)
    .where(eq(passwordCredentials.userId, userId));
  return rows.length > 0;
}
