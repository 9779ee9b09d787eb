import { eq, recoveryCodes, type Database } from '@latchkey/db';
import { hashRecoveryCode, newRecoveryCode, normaliseRecoveryCode } from './code.js';

export const DEFAULT_RECOVERY_CODE_COUNT = 10;
const MAX_RECOVERY_CODE_COUNT = 100;

/**
 * A fresh set of recovery codes for the account, replacing all earlier ones (delete and insert in one
 * transaction). The codes are returned in clear this once: show them once, never log them; only their
 * hashes are stored.
 */
export async function generateRecoveryCodes(
  db: Database,
  userId: string,
  options: { count?: number } = {},
  now = new Date(),
): Promise<string[]> {
  const count = options.count ?? DEFAULT_RECOVERY_CODE_COUNT;
  if (!Number.isInteger(count) || count < 1 || count > MAX_RECOVERY_CODE_COUNT) {
    throw new RangeError(`count must be an integer from 1 to ${MAX_RECOVERY_CODE_COUNT}`);
  }
  const codes = new Set<string>();
  while (codes.size < count) codes.add(newRecoveryCode());
  const rows = [...codes].map((code) => ({ codeHash: hashRecoveryCode(userId, normaliseRecoveryCode(code)!), userId, createdAt: now }));
  await db.transaction(async (tx) => {
    await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
    await tx.insert(recoveryCodes).values(rows);
  });
  return [...codes];
}
