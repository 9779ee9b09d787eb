import { passwordCredentials, sql, type Database } from '@latchkey/db';
import { hashPassword } from './argon2.js';
import { PasswordError } from './errors.js';
import { checkPasswordPolicy, normalizePassword } from './policy.js';
import type { SetPasswordRequest } from './types.js';

/**
 * Sets or replaces the account's password: checks the rule first (PASSWORD_TOO_WEAK, PASSWORD_TOO_LONG, and
 * then nothing is stored), hashes the NFKC form with argon2id and upserts the PHC string. That the caller
 * signed in freshly with a strong factor, and rate limits, are the caller's rules to apply first.
 */
export async function setPassword(db: Database, request: SetPasswordRequest): Promise<void> {
  const refusal = checkPasswordPolicy(request.password, request.email);
  if (refusal) throw new PasswordError(refusal);
  const passwordHash = await hashPassword(normalizePassword(request.password));
  await db
    .insert(passwordCredentials)
    .values({ userId: request.userId, passwordHash })
    .onConflictDoUpdate({ target: passwordCredentials.userId, set: { passwordHash, updatedAt: sql`now()` } });
}
