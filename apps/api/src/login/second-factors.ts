import { confirmTotpEnrolment, consumeRecoveryCode, countRecoveryCodes, hasConfirmedTotp, startTotpEnrolment, TotpError, verifyTotp } from '@latchkey/auth';
import type { Database } from '@latchkey/db';
import type { SecondFactors } from './factor-pages.js';

/** The second factors of packages/auth (authenticator app, recovery codes) as the factor pages use them. */
export function createSecondFactors(db: Database, totpKey: Uint8Array, issuer: string): SecondFactors {
  return {
    hasTotp: (userId) => hasConfirmedTotp(db, userId),
    async verifyTotp(userId, code) {
      try {
        await verifyTotp(db, totpKey, { userId, code });
        return true;
      } catch (error) {
        if (error instanceof TotpError) return false;
        throw error;
      }
    },
    startTotpEnrolment: (userId, accountName) => startTotpEnrolment(db, totpKey, { userId, accountName, issuer }),
    async confirmTotpEnrolment(userId, code) {
      try {
        await confirmTotpEnrolment(db, totpKey, { userId, code });
        return true;
      } catch (error) {
        if (error instanceof TotpError) return false;
        throw error;
      }
    },
    recoveryCodesLeft: (userId) => countRecoveryCodes(db, userId),
    useRecoveryCode: (userId, code) => consumeRecoveryCode(db, userId, code),
  };
}
