import { and, eq, isNotNull, totpCredentials, type Database } from '@latchkey/db';

/** Whether the account has a confirmed authenticator app (a pending enrolment does not count). */
export async function hasConfirmedTotp(db: Database, userId: string): Promise<boolean> {
  const rows = await db
    .select({ userId: totpCredentials.userId })
    .from(totpCredentials)
    .where(and(eq(totpCredentials.userId, userId), isNotNull(totpCredentials.confirmedAt)));
  return rows.length > 0;
}
