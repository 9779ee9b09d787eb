import { challengeFor, type AccessTokenVerifier, type VerificationResult } from './access-token-verifier.js';
import type { ProofContext } from './dpop-proof.js';
import { principalFrom, type PrincipalResult } from './principal-from.js';
import type { Caller } from './principal.js';

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
      return verified instanceof Promise ? verified.then((result) => settle(context, result)) : settle(context, verified);
    },
    challengeOf: (context) => {
      const result = rejected.get(context);
      return result ? challengeFor(result) : undefined;
    },
  };
}
