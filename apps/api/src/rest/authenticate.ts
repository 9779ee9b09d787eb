import { challengeFor, callerFrom, proofOfRequest, type AccessTokenVerifier, type SignedInCaller } from '@latchkey/auth/tokens';
import { restError, type RestMiddleware } from './router.js';

/**
 * Authentication for REST routes (spec Authentication 1): `Bearer <token>`, or `DPoP <token>` with the request's
 * `DPoP` proof (RFC 9449). A valid token sets the caller; a token that is presented but refused is answered 401 at
 * once with its challenge (RFC 6750 `invalid_token`, or RFC 9449's), never treated as a guest.
 */
export function authenticate(verifier: AccessTokenVerifier): RestMiddleware<SignedInCaller> {
  return async (request) => {
    const { req } = request;
    const result = await callerFrom(verifier, { authorization: req.headers.authorization, dpop: () => proofOfRequest(req) });
    if (result === undefined) return;
    if (!result.ok) {
      return restError(401, 'The access token is invalid or expired.', {}, { 'www-authenticate': challengeFor(result) });
    }
    request.caller = result.caller;
  };
}
