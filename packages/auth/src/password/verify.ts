import { verify } from '@node-rs/argon2';
import { and, eq, passwordCredentials, type Database } from '@latchkey/db';
import { dummyHash, hashPassword, needsRehash } from './argon2.js';
import { codePointCount, normalizePassword, PASSWORD_MAX_LENGTH } from './policy.js';
import type { VerifyPasswordRequest } from './types.js';

/**
 * Whether `password` is the account's password. An account without a password is still checked against a
 * dummy hash, so the time taken does not tell "no password" from "wrong password". Input longer than any
 * password that can be set is false without hashing (a cheap guard against hashing megabytes). A successful
 * check of a hash made with weaker parameters than the current ones replaces it (rehash on login; only if
 * the stored hash is still the one checked, and `updated_at` stays: the password did not change).
 * Rate limits and lockout are the caller's (see rate-limit).
 */
export async function verifyPassword(db: Database, request: VerifyPasswordRequest): Promise<boolean> {
  // 4 UTF-16 units per allowed code point bounds the raw input before normalizing it (NFKC can shrink it).
  if (request.password.length > 4 * PASSWORD_MAX_LENGTH) return false;
  const normalized = normalizePassword(request.password);
  if (codePointCount(normalized) > PASSWORD_MAX_LENGTH) return false;

  const [row] = await db
    .select({ passwordHash: passwordCredentials.passwordHash })
    .from(passwordCredentials)
    .where(eq(passwordCredentials.userId, request.userId));
  if (!row) {
    await verify(await dummyHash(), normalized);
    return false;
  }
  if (!(await verify(row.passwordHash, normalized))) return false;

  if (needsRehash(row.passwordHash)) {
    const passwordHash = await hashPassword(normalized);
    await db
      .update(passwordCredentials)
      .set({ passwordHash })
      .where(and(eq(passwordCredentials.userId, request.userId), eq(passwordCredentials.passwordHash, row.passwordHash)));
  }
  return true;
}
