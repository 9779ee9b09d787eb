import type { AccessTokenVerifier } from './access-token-verifier.js';
import { principalFrom, type PrincipalResult } from './principal-from.js';
import type { Caller } from './principal.js';

export interface CallerResolutionOptions<Context extends object> {
  verifier: AccessTokenVerifier;
  /** The `Authorization` value an operation carries: its request's header, or its WebSocket connection's credential. */
  authorizationOf: (context: Context) => string | null | undefined;
}

export interface CallerResolution<Context extends object> {
  /**
   * `@envelop/generic-auth`'s `resolveUserFn`: the operation's caller, once per operation, through `principalFrom`
   * (synchronous on a cached token). A presented credential that does not verify makes a guest (`null`) whose
   * refusal says so (`credentialRejected`).
   */
  resolveUserFn: (context: Context) => Caller | Promise<Caller>;
  /** Whether the operation presented a credential that was refused (read after `resolveUserFn` ran for it). */
  credentialRejected: (context: Context) => boolean;
}

/** The caller of a GraphQL operation (spec Authentication 1-5), resolved once per operation and remembered beside it. */
export function createCallerResolution<Context extends object>(options: CallerResolutionOptions<Context>): CallerResolution<Context> {
  const { verifier, authorizationOf } = options;
  const rejected = new WeakSet<Context>();
  const settle = (context: Context, result: PrincipalResult): Caller => {
    if (result?.ok) return result.principal;
    if (result) rejected.add(context);
    return null;
  };
  return {
    resolveUserFn(context) {
      const verified = principalFrom(verifier, { authorization: authorizationOf(context) });
      return verified instanceof Promise ? verified.then((result) => settle(context, result)) : settle(context, verified);
    },
    credentialRejected: (context) => rejected.has(context),
  };
}
