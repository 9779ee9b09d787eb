import { and, eq, isNull, totpCredentials, type Database } from '@latchkey/db';
import { isTotpCodeShaped, matchStep } from './code.js';
import { TotpError } from './errors.js';
import { openTotpSecret } from './secret-box.js';
import type { TotpCodeRequest } from './types.js';

/**
 * Confirms the pending authenticator app with a code from it (same window as verifyTotp). From then on the
 * credential is active, and the confirming code's step counts as used, so it cannot sign anybody in.
 * Refusals: TOTP_CODE_INVALID (wrong or malformed code), TOTP_NOT_ENROLLED (nothing pending, or the pending
 * enrolment was restarted or confirmed meanwhile), TOTP_ALREADY_ENROLLED (already confirmed).
 */
export async function confirmTotpEnrolment(db: Database, key: Uint8Array, request: TotpCodeRequest): Promise<void> {
  if (!isTotpCodeShaped(request.code)) throw new TotpError('TOTP_CODE_INVALID');
  const now = request.now ?? new Date();
  const [row] = await db
    .select({ secretCiphertext: totpCredentials.secretCiphertext, confirmedAt: totpCredentials.confirmedAt })
    .from(totpCredentials)
    .where(eq(totpCredentials.userId, request.userId));
  if (!row) throw new TotpError('TOTP_NOT_ENROLLED');
  if (row.confirmedAt !== null) throw new TotpError('TOTP_ALREADY_ENROLLED');
  const secret = openTotpSecret(key, request.userId, row.secretCiphertext);
  const match = await matchStep(secret, request.code, now, null);
  if (match.outcome !== 'valid') throw new TotpError('TOTP_CODE_INVALID');
  // Only the very enrolment the code was checked against: not one restarted (new secret) in the meantime.
  const confirmed = await db
    .update(totpCredentials)
    .set({ confirmedAt: now, lastUsedStep: match.step })
    .where(
      and(
        eq(totpCredentials.userId, request.userId),
        isNull(totpCredentials.confirmedAt),
        eq(totpCredentials.secretCiphertext, row.secretCiphertext),
      ),
    )
    .returning({ userId: totpCredentials.userId });
  if (confirmed.length === 0) throw new TotpError('TOTP_NOT_ENROLLED');
}
