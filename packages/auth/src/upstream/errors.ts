import { definedErrors } from '@latchkey/errors';

/**
 * Why an upstream OpenID sign-in or a link was refused. The code is for the caller's logic and logs; the
 * message is fixed per code and quotes nothing from the upstream provider's answer.
 */
export const UPSTREAM_ERRORS = {
  /** the upstream provider answered the authorization request with an error (the user cancelled, ...) */
  UPSTREAM_DENIED: 'The sign-in at the upstream provider was cancelled or refused.',
  /**
   * the callback does not belong to the request this browser started (wrong or missing state), or the code
   * was used already, expired, or the ID token did not verify (issuer, audience, nonce, signature, times)
   */
  UPSTREAM_INVALID_RESPONSE: 'The answer from the upstream provider is not valid for this browser. Start again.',
  /** the upstream provider could not be reached or answered with a server error */
  UPSTREAM_UNAVAILABLE: 'The upstream provider cannot be reached right now. Try again shortly.',
  /** linking: this upstream identity is linked to another account already */
  UPSTREAM_LINKED_ELSEWHERE: 'This upstream account is already linked to another account.',
  /** linking: the issuer or subject is empty, too long or not printable */
  UPSTREAM_IDENTITY_INVALID: 'The upstream identity is not valid.',
} as const;

export type UpstreamErrorCode = keyof typeof UPSTREAM_ERRORS;

/**
 * A refused upstream sign-in or link. `upstreamError` is the OAuth error code the upstream provider sent
 * (`access_denied`, `invalid_grant`, ...) when there was one, for logs; the cause is kept for logs too.
 */
export class UpstreamError extends definedErrors('UpstreamError', UPSTREAM_ERRORS) {
  readonly upstreamError: string | undefined;

  constructor(code: UpstreamErrorCode, options: { upstreamError?: string; cause?: unknown } = {}) {
    super(code, options.cause === undefined ? undefined : { cause: options.cause });
    this.upstreamError = options.upstreamError;
  }
}
