import { isPromise } from '@whatwg-node/promise-helpers';
import { challengeFor, type AccessTokenVerifier, type Caller, type ProofOf, type VerificationResult } from './access-token-verifier.js';
import type { ProofContext } from './dpop-proof.js';

// Who is calling: the verified token's claims (`Principal`, access-token-verifier.ts), found the one way every entry point finds them
// (`principalFrom`), and, for GraphQL, once per operation (`createCallerResolution`).

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

export interface CallerResolutionOptions<Context extends object> {
  verifier: AccessTokenVerifier;
  /** The `Authorization` value an operation carries: its request's header, or its WebSocket connection's credential. */
  authorizationOf: (context: Context) => string | null | undefined;
  /** The DPoP proof an operation carries (its request's `DPoP` header, method and path), for DPoP-bound tokens. */
  proofOf?: (context: Context) => ProofContext | undefined;
}

export interface CallerResolution<Context extends object> {
  /**
   * `@envelop/generic-auth`'s `resolveUserFn`: the operation's caller, once per operation, through `principalFrom`
   * (synchronous on a cached bearer token). A presented credential that does not verify makes a guest (`null`)
   * whose refusal says so (`challengeOf`).
   */
  resolveUserFn: (context: Context) => Caller | Promise<Caller>;
  /** The `WWW-Authenticate` challenge for the operation's refused credential (Bearer's, or DPoP's); undefined if none. */
  challengeOf: (context: Context) => string | undefined;
}

/** The caller of a GraphQL operation (spec Authentication 1-5), resolved once per operation and remembered beside it. */
export function createCallerResolution<Context extends object>(options: CallerResolutionOptions<Context>): CallerResolution<Context> {
  const { verifier, authorizationOf, proofOf } = options;
  const rejected = new WeakMap<Context, VerificationResult & { ok: false }>();
  const settle = (context: Context, result: PrincipalResult): Caller => {
    if (result?.ok) return result.principal;
    if (result) rejected.set(context, result);
    return null;
  };
  return {
    resolveUserFn(context) {
      const verified = principalFrom(verifier, { authorization: authorizationOf(context), dpop: proofOf && (() => proofOf(context)) });
      return isPromise(verified) ? verified.then((result) => settle(context, result)) : settle(context, verified);
    },
    challengeOf: (context) => {
      const result = rejected.get(context);
      return result ? challengeFor(result) : undefined;
    },
  };
}
