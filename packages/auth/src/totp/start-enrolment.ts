import { isNull, totpCredentials, type Database } from '@latchkey/db';
import { generateSecret, generateURI } from 'otplib';
import QRCode from 'qrcode';
import { TOTP_DIGITS, TOTP_PERIOD_SECONDS } from './code.js';
import { TotpError } from './errors.js';
import { sealTotpSecret } from './secret-box.js';
import type { StartTotpEnrolmentRequest, TotpEnrolment } from './types.js';

/**
 * Starts (or restarts) adding an authenticator app: a new 160-bit secret, stored encrypted with `key` as the
 * account's pending credential, replacing any earlier pending one. It counts only once confirmEnrolment has
 * seen a code from the app. While a confirmed credential exists this is refused (TOTP_ALREADY_ENROLLED):
 * removeTotp first. One upsert, so a confirmation racing with it is never overwritten.
 */
export async function startTotpEnrolment(
  db: Database,
  key: Uint8Array,
  request: StartTotpEnrolmentRequest,
  now = new Date(),
): Promise<TotpEnrolment> {
  const secret = generateSecret({ length: 20 });
  const secretCiphertext = sealTotpSecret(key, request.userId, secret);
  const stored = await db
    .insert(totpCredentials)
    .values({ userId: request.userId, secretCiphertext, confirmedAt: null, lastUsedStep: null, createdAt: now })
    .onConflictDoUpdate({
      target: totpCredentials.userId,
      set: { secretCiphertext, confirmedAt: null, lastUsedStep: null, createdAt: now },
      setWhere: isNull(totpCredentials.confirmedAt),
    })
    .returning({ userId: totpCredentials.userId });
  if (stored.length === 0) throw new TotpError('TOTP_ALREADY_ENROLLED');
  const otpauthUri = generateURI({
    issuer: request.issuer,
    label: request.accountName,
    secret,
    algorithm: 'sha1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
  });
  const qrSvg = await QRCode.toString(otpauthUri, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });
  return { secret, otpauthUri, qrSvg };
}
