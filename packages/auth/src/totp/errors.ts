import { definedErrors } from '@latchkey/errors';

/**
 * Why a TOTP operation was refused. The code is for the caller's logic and logs; the message is fixed per
 * code. A wrong code and a replayed one read the same to the user: only the logs tell them apart.
 */
export const TOTP_ERRORS = {
  /** not six digits, or no match within the accepted window (current step +/- 1) */
  TOTP_CODE_INVALID: 'The code is not valid. Try the current code from your app.',
  /** the code matched, but its time step is not later than the last one accepted (replay) */
  TOTP_CODE_REPLAYED: 'The code is not valid. Try the current code from your app.',
  /** no credential to check against: none at all, or (verification) none confirmed, or (confirmation) none pending */
  TOTP_NOT_ENROLLED: 'No authenticator app is set up for this account.',
  /**
   * the stored secret no longer opens: it was sealed under a key derived from an earlier SIGNING_KEY. The app
   * cannot be checked until it is set up again (docs/operations.md, "Signing keys and rotation").
   */
  TOTP_SECRET_UNREADABLE: 'This authenticator app can no longer be checked. Sign in another way and set it up again.',
  /** enrolment: a confirmed authenticator app exists; remove it first */
  TOTP_ALREADY_ENROLLED: 'An authenticator app is already set up for this account.',
} as const;

export type TotpErrorCode = keyof typeof TOTP_ERRORS;

/** A refused TOTP operation. Carries no `cause`, nor the code, nor the secret. */
export class TotpError extends definedErrors('TotpError', TOTP_ERRORS) {}
