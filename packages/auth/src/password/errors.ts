import { definedErrors } from '@latchkey/errors';

/**
 * Why setting a password was refused. The code is for the caller's logic and logs; the message is fixed per
 * code and states the rule, never the password. (Verification does not throw: a wrong password, an account
 * without one and an over-long input all read `false`.)
 */
export const PASSWORD_ERRORS = {
  /** fewer than 12 characters (code points, after NFKC), only whitespace, or the account's e-mail address */
  PASSWORD_TOO_WEAK: 'A password needs at least 12 characters and must not be your e-mail address.',
  /** more than 256 characters (code points, after NFKC) */
  PASSWORD_TOO_LONG: 'A password can have at most 256 characters.',
} as const;

export type PasswordErrorCode = keyof typeof PASSWORD_ERRORS;

/** A refused password operation. Carries no `cause`, nor the password. */
export class PasswordError extends definedErrors('PasswordError', PASSWORD_ERRORS) {}
