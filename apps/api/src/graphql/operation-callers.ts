import { useGenericAuth } from '@envelop/generic-auth';
import {
  createCallerResolution,
  proofOfRequest,
  type AccessTokenVerifier,
  type ProofContext,
  type SignedInCaller,
} from '@latchkey/auth/tokens';
import { isDatabaseUnavailable } from '@latchkey/db';
import { handleMaybePromise } from '@whatwg-node/promise-helpers';
import type { GraphQLContext } from './context.js';
import { serviceUnavailable } from './errors.js';

// Who calls each GraphQL operation: the credential it carries, verified once into `context.caller`. What the caller
// may then see is judged on its `Subject`, read through context.ts (`subjectAtHand`).

/**
 * The `Authorization` value an operation carries: a WebSocket operation its connection's credential
 * (`connectionAuthorization`, given by the socket layer), an HTTP one its request's header.
 */
export function authorizationOfOperation(context: GraphQLContext): string | null | undefined {
  const fromConnection = (context as { connectionAuthorization?: string | null }).connectionAuthorization;
  if (fromConnection !== undefined) return fromConnection;
  const { req } = context as { req?: { headers: { authorization?: string } } };
  return req ? req.headers.authorization : context.request.headers.get('authorization');
}

/**
 * The DPoP proof an operation carries: over HTTP its request's `DPoP` header, method and path; over WebSocket the
 * key its connection proved at `connection_init` (`connectionProvenKey`, given by the socket layer).
 */
export function proofOfOperation(context: GraphQLContext): ProofContext | undefined {
  const provenKey = (context as { connectionProvenKey?: string }).connectionProvenKey;
  if (provenKey !== undefined) return { proof: undefined, method: 'GET', path: '/graphql', provenKey };
  const { req } = context as { req?: Parameters<typeof proofOfRequest>[0] };
  return req ? proofOfRequest(req) : undefined;
}

/**
 * Who calls each operation (spec Authentication 1-5), over HTTP and over WebSocket alike: the plugin (`useCaller`)
 * sets `context.caller` once per operation at its root, from the credential the operation carries
 * (`authorizationOfOperation`, `proofOfOperation`); `challengeOf` is the challenge of a refused one. Made once.
 */
export function createOperationCallers(verifier: AccessTokenVerifier) {
  const callers = createCallerResolution<GraphQLContext>({
    verifier,
    authorizationOf: authorizationOfOperation,
    proofOf: proofOfOperation,
  });
  // A caller whose token names a session this instance cannot judge now (the ended-sessions list is stale) is
  // refused with SERVICE_UNAVAILABLE before anything runs: not let through, not a 500.
  const unavailable = (error: unknown): never => {
    throw isDatabaseUnavailable(error) ? serviceUnavailable() : error;
  };
  const resolveCaller: typeof callers.resolveUserFn = (context) =>
    handleMaybePromise(
      () => callers.resolveUserFn(context),
      (caller) => caller,
      unavailable,
    );
  return {
    resolveUserFn: callers.resolveUserFn,
    challengeOf: callers.challengeOf,
    /** generic-auth, resolving only: refusing a guest is the route rules' */
    useCaller: (): ReturnType<typeof useGenericAuth<SignedInCaller, GraphQLContext, 'caller'>> =>
      useGenericAuth({ mode: 'resolve-only', contextFieldName: 'caller', resolveUserFn: resolveCaller }),
  };
}

export type OperationCallers = ReturnType<typeof createOperationCallers>;
