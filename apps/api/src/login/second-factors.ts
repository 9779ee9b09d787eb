import {
  confirmTotpEnrolment,
  consumeRecoveryCode,
  countRecoveryCodes,
  hasConfirmedTotp,
  hasPassword,
  PasswordError,
  setPassword,
  startTotpEnrolment,
  TotpError,
  verifyPassword,
  verifyTotp,
} from '@latchkey/auth';
import type { Database } from '@latchkey/db';
import type { SecondFactors } from './factor-pages.js';

/**
 * The second factors of packages/auth (authenticator app, recovery codes, and passwords unless `passwords` is
 * off) as the factor pages use them.
 */
export function createSecondFactors(db: Database, totpKey: Uint8Array, issuer: string, passwords: boolean): SecondFactors {
  const passwordFactor: Pick<SecondFactors, 'hasPassword' | 'verifyPassword' | 'setPassword'> = passwords
    ? {
        hasPassword: (userId) => hasPassword(db, userId),
        verifyPassword: (userId, password) => verifyPassword(db, { userId, password }),
        async setPassword(userId, email, password) {
          try {
            await setPassword(db, { userId, email, password });
            return undefined;
          } catch (error) {
            if (error instanceof PasswordError) return error.message;
            throw error;
          }
        },
      }
    : {};
  return {
    ...passwordFactor,
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
