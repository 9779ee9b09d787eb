import { hasPassword, PasswordError, setPassword, verifyPassword } from '../password/index.js';
import { consumeRecoveryCode, countRecoveryCodes } from '../recovery-codes/index.js';
import { confirmTotpEnrolment, hasConfirmedTotp, startTotpEnrolment, TotpError, type TotpEnrolment, verifyTotp } from '../totp/index.js';
import type { Database } from '@latchkey/db';

/** The second factors the factor pages can check, for an account in the middle of signing in. */
export interface SecondFactors {
  /** whether the account has a confirmed authenticator app */
  hasTotp(userId: string): Promise<boolean>;
  /** checks a code from the account's authenticator app (single use per time step) */
  verifyTotp(userId: string, code: string): Promise<boolean>;
  /**
   * Starts setting up an authenticator app during sign-in (the account has none yet): the first one trusts
   * the factors proven so far, as Keycloak's "configure OTP" step does; changing it later needs a recent
   * sign-in on the account page.
   */
  startTotpEnrolment(userId: string, accountName: string): Promise<TotpEnrolment>;
  /** confirms the pending authenticator app with a code from it; false for a wrong code */
  confirmTotpEnrolment(userId: string, code: string): Promise<boolean>;
  recoveryCodesLeft(userId: string): Promise<number>;
  /** uses up one of the account's recovery codes */
  useRecoveryCode(userId: string, code: string): Promise<boolean>;
  /** whether the account has a password (undefined: passwords are switched off on this server) */
  hasPassword?(userId: string): Promise<boolean>;
  /** checks the account's password (false for a wrong one, or none) */
  verifyPassword?(userId: string, password: string): Promise<boolean>;
  /**
   * Sets the first password of an account that has none, during a sign-in whose rule asks for one (as the first
   * authenticator app is set up on the way); the refusal's message when the password breaks the rule.
   */
  setPassword?(userId: string, email: string, password: string): Promise<string | undefined>;
}

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
