import { definedErrors } from '@latchkey/errors';

/**
 * Why a passkey operation was refused. The code is for the caller's logic and logs; the message is fixed
 * per code and says nothing about which check failed, whose credential it was, or whether an account exists.
 */
export const PASSKEY_ERRORS = {
  /** no such challenge, already used, expired, another purpose, another user or another binding */
  PASSKEY_CHALLENGE_INVALID: 'The passkey request has expired or is not valid. Please try again.',
  /** the WebAuthn response did not verify (signature, origin, RP ID, user presence or verification, ...) */
  PASSKEY_VERIFICATION_FAILED: 'The passkey could not be verified.',
  /** registration: this credential is stored already */
  PASSKEY_ALREADY_REGISTERED: 'This passkey is already registered.',
  /** authentication: no credential with this id is registered for this relying party */
  PASSKEY_UNKNOWN_CREDENTIAL: 'The passkey could not be verified.',
  /** authentication: the signature counter did not increase; the authenticator may have been cloned */
  PASSKEY_COUNTER_REGRESSION: 'The passkey could not be verified.',
  /** rename: the label is empty, longer than 64 characters or contains control characters */
  PASSKEY_LABEL_INVALID: 'A passkey name must be 1 to 64 characters long.',
} as const;

export type PasskeyErrorCode = keyof typeof PASSKEY_ERRORS;

/**
 * A refused passkey operation. Carries no `cause`: the library's messages quote challenges and origins,
 * and nothing of the kind should travel further than the code.
 */
export class PasskeyError extends definedErrors('PasskeyError', PASSKEY_ERRORS) {}
