import { count, eq, recoveryCodes, type Database } from '@latchkey/db';

/** How many unused recovery codes the account has left. */
export async function countRecoveryCodes(db: Database, userId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(recoveryCodes).where(eq(recoveryCodes.userId, userId));
  return row?.n ?? 0;
}
