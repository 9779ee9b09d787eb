import { and, eq, recoveryCodes, type Database } from '@latchkey/db';
import { hashRecoveryCode, normaliseRecoveryCode } from './code.js';

/**
 * Uses one of the account's recovery codes up: one DELETE ... RETURNING, so each code works once and of
 * concurrent submissions exactly one succeeds. False for a wrong, used or another account's code; input that
 * cannot be a code never reaches the database. Rate limits and lockout are the caller's (see rate-limit).
 */
export async function consumeRecoveryCode(db: Database, userId: string, code: string): Promise<boolean> {
  const normalised = normaliseRecoveryCode(code);
  if (normalised === null) return false;
  const removed = await db
    .delete(recoveryCodes)
    .where(and(eq(recoveryCodes.codeHash, hashRecoveryCode(userId, normalised)), eq(recoveryCodes.userId, userId)))
    .returning({ codeHash: recoveryCodes.codeHash });
  return removed.length > 0;
}
