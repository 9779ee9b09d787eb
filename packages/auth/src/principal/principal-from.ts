import type { AccessTokenVerifier, ProofOf, VerificationResult } from './access-token-verifier.js';
import type { ProofContext } from './dpop-proof.js';

/**
 * Where a caller's credential arrives: the `Authorization` header of an HTTP request (GraphQL over HTTP, REST,
 * the login routes' API callers), or the `connectionParams` of a graphql-ws `connection_init` message, whose
 * `authorization` (or `Authorization`) value is a bearer token with or without its `Bearer ` scheme.
 */
export type PresentedCredential =
  | {
      authorization: string | null | undefined;
      /** the request's `DPoP` header, method and path, asked for only when the credential uses the DPoP scheme */
      dpop?: ProofOf;
    }
  | { connectionParams: unknown /** the WebSocket endpoint's path (`htu`; `htm` is GET) */; path?: string };

/** The caller as a verification settles it: `undefined` when nothing was presented (a guest). */
export type PrincipalResult = VerificationResult | undefined;

/** The `Authorization` value a WebSocket connection's parameters stand for; false when they carry a non-string. */
export function authorizationOfConnection(connectionParams: unknown): string | undefined | false {
  const params = (connectionParams ?? {}) as { authorization?: unknown; Authorization?: unknown };
  const given = params.authorization ?? params.Authorization;
  if (given === undefined || given === null || given === '') return undefined;
  if (typeof given !== 'string') return false;
  return /^(bearer|dpop) /i.test(given) ? given : `Bearer ${given}`;
}

/** The DPoP proof of a WebSocket connection: `connectionParams.dpop`, made for GET on the endpoint's URL. */
export function proofOfConnection(connectionParams: unknown, path: string): ProofContext {
  const { dpop } = (connectionParams ?? {}) as { dpop?: unknown };
  return { proof: typeof dpop === 'string' ? dpop : undefined, method: 'GET', path };
}

const NOT_A_TOKEN: VerificationResult = Object.freeze({ ok: false, rejection: 'malformed' });

/**
 * The one way every entry point (GraphQL over HTTP and WebSocket, REST, the login routes' API callers) works
 * out who is calling (spec Authentication 1-5): the presented credential verified once, cached
 * by its exact text until it expires. Answers synchronously on a cache hit, so the signed-in hot path costs a
 * Map lookup. A presented credential that does not verify is `{ ok: false }`, never a guest: the caller decides
 * whether that is a 401 (REST, WebSocket) or a guest whose refusal carries its challenge (GraphQL's public fields).
 */
export function principalFrom(verifier: AccessTokenVerifier, presented: PresentedCredential): PrincipalResult | Promise<PrincipalResult> {
  if ('authorization' in presented) return verifier.verifyAuthorization(presented.authorization, presented.dpop);
  const header = authorizationOfConnection(presented.connectionParams);
  if (header === false) return NOT_A_TOKEN;
  return verifier.verifyAuthorization(header, () => proofOfConnection(presented.connectionParams, presented.path ?? '/graphql'));
}
