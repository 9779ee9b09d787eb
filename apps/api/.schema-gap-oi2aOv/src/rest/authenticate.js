import { principalFrom } from '@latchkey/auth/tokens';
import { restError } from './router.js';
/**
 * Bearer authentication for REST routes (spec Authentication 1): a valid token sets the caller; a token that
 * is presented but refused is answered 401 at once (RFC 6750 `invalid_token`), never treated as a guest.
 */
export function authenticate(verifier) {
    return async (request) => {
        const header = request.req.headers.authorization;
        const result = await principalFrom(verifier, { authorization: header });
        if (result === undefined)
            return;
        if (!result.ok) {
            return restError(401, 'The access token is invalid or expired.', {}, { 'www-authenticate': 'Bearer error="invalid_token"' });
        }
        request.caller = result.principal;
    };
}
//# sourceMappingURL=authenticate.js.map