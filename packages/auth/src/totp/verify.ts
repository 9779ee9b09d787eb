import { and, eq, isNotNull, isNull, lt, or, totpCredentials, type Database } from '@latchkey/db';
import { isTotpCodeShaped, matchStep } from './code.js';
import { TotpError } from './errors.js';
import { openTotpSecret } from './secret-box.js';
import type { TotpCodeRequest } from './types.js';

/**
 * Checks a code from the account's confirmed authenticator app: the current 30-second step or one either
 * side, and only a step later than the last one accepted (so a code, and any older one, works once). The step
 * is claimed with one conditional UPDATE, so of concurrent submissions of the same code exactly one succeeds.
 * Refusals: TOTP_CODE_INVALID (malformed codes never reach the database), TOTP_CODE_REPLAYED (same message),
 * TOTP_NOT_ENROLLED (no confirmed credential). Rate limits and lockout are the caller's (see rate-limit).
 */
export async function verifyTotp(db: Database, key: Uint8Array, request: TotpCodeRequest): Promise<void> {
  if (!isTotpCodeShaped(request.code)) throw new TotpError('TOTP_CODE_INVALID');
  const now = request.now ?? new Date();
  const [row] = await db
    .select({ secretCiphertext: totpCredentials.secretCiphertext, lastUsedStep: totpCredentials.lastUsedStep })
    .from(totpCredentials)
    .where(and(eq(totpCredentials.userId, request.userId), isNotNull(totpCredentials.confirmedAt)));
  if (!row) throw new TotpError('TOTP_NOT_ENROLLED');
  const secret = openTotpSecret(key, request.userId, row.secretCiphertext);
  const match = await matchStep(secret, request.code, now, row.lastUsedStep);
  if (match.outcome !== 'valid') throw new TotpError(match.outcome === 'replayed' ? 'TOTP_CODE_REPLAYED' : 'TOTP_CODE_INVALID');
  const claimed = await db
    .update(totpCredentials)
    .set({ lastUsedStep: match.step })
    .where(
      and(
        eq(totpCredentials.userId, request.userId),
        isNotNull(totpCredentials.confirmedAt),
        eq(totpCredentials.secretCiphertext, row.secretCiphertext),
        or(isNull(totpCredentials.lastUsedStep), lt(totpCredentials.lastUsedStep, match.step)),
      ),
    )
    .returning({ userId: totpCredentials.userId });
  // Another submission claimed this step (or a later one) first.
  if (claimed.length === 0) throw new TotpError('TOTP_CODE_REPLAYED');
}
