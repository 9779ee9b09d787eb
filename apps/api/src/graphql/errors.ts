import { RETRY_AFTER_SECONDS } from '@latchkey/db';
import { GraphQLError, type ASTNode } from 'graphql';
import {
  insufficientScopeChallenge,
  insufficientScopeMessage,
  stepUpChallengeHeader,
  stepUpDescription,
  stepUpParameters,
  type StepUpRequirement,
} from '@latchkey/auth/tokens';

/** The one error vocabulary of the service (its codes in docs/), kept as data. */
export const ErrorCode = {
  GRAPHQL_PARSE_FAILED: 'GRAPHQL_PARSE_FAILED',
  GRAPHQL_VALIDATION_FAILED: 'GRAPHQL_VALIDATION_FAILED',
  BAD_REQUEST: 'BAD_REQUEST',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  QUERY_TOO_COMPLEX: 'QUERY_TOO_COMPLEX',
  BAD_USER_INPUT: 'BAD_USER_INPUT',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  INSUFFICIENT_USER_AUTHENTICATION: 'INSUFFICIENT_USER_AUTHENTICATION',
  // Raised by @latchkey/persisted (its own factories), listed here so the vocabulary is complete.
  PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  PERSISTED_QUERY_NOT_ALLOWED: 'PERSISTED_QUERY_NOT_ALLOWED',
  PERSISTED_QUERY_MISMATCH: 'PERSISTED_QUERY_MISMATCH',
  PERSISTED_QUERY_NOT_SUPPORTED: 'PERSISTED_QUERY_NOT_SUPPORTED',
  RATE_LIMITED: 'RATE_LIMITED',
  /** a dependency (the database) is down or did not answer in time: bounded and honest, never a 500 */
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  /** a subscription's stream ended by the server: too slow a reader / events it can no longer be given */
  SUBSCRIPTION_DROPPED: 'SUBSCRIPTION_DROPPED',
  SUBSCRIPTION_INTERRUPTED: 'SUBSCRIPTION_INTERRUPTED',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

interface HttpExtension {
  status: number;
  /**
   * true = a GraphQL-over-HTTP "request error": the status applies to application/graphql-response+json only,
   * application/json keeps 200 (spec status table). Yoga reads this flag.
   */
  spec?: boolean;
  headers?: Record<string, string>;
}

function requestError(message: string, code: ErrorCode, http: HttpExtension, nodes?: readonly ASTNode[]): GraphQLError {
  return new GraphQLError(message, { nodes, extensions: { code, http } });
}

/** A query rejected by a limit (depth, aliases, tokens, directives, cost): a validation failure. */
export function queryTooComplex(message: string, nodes?: readonly ASTNode[]): GraphQLError {
  return requestError(message, ErrorCode.QUERY_TOO_COMPLEX, { status: 400, spec: true }, nodes);
}

/**
 * Route-level refusal of a guest (spec Authorization 4): the operation never executes. `rejected` is the
 * `WWW-Authenticate` challenge of a presented credential that was refused (Bearer's, or DPoP's); undefined when
 * none was presented.
 */
export function unauthenticated(rejected: string | undefined): GraphQLError {
  const message = rejected ? 'The access token is invalid or expired.' : 'Sign in to perform this operation.';
  return requestError(message, ErrorCode.UNAUTHENTICATED, {
    status: 401,
    spec: true,
    headers: { 'WWW-Authenticate': rejected ?? 'Bearer' },
  });
}

/**
 * Route-level refusal of a caller whose access token lacks a scope the operation needs (RFC 6750 §3.1): the operation
 * never executes, no record is loaded. 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`
 * (every scope it needs) under application/graphql-response+json, 200 under application/json.
 */
export function insufficientScope(required: readonly string[]): GraphQLError {
  return requestError(insufficientScopeMessage(required), ErrorCode.FORBIDDEN, {
    status: 403,
    spec: true,
    headers: { 'WWW-Authenticate': insufficientScopeChallenge(required) },
  });
}

const UNAVAILABLE_MESSAGE = 'The database is unavailable. Try again shortly.';

/**
 * A known database outage met before execution (the operation selects a field that needs the database): the
 * operation never runs. 503 with Retry-After under application/graphql-response+json, 200 under application/json.
 */
export function serviceUnavailable(): GraphQLError {
  return requestError(UNAVAILABLE_MESSAGE, ErrorCode.SERVICE_UNAVAILABLE, {
    status: 503,
    spec: true,
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  });
}

/** The database failed a field during execution: an execution error at that field's path (partial success, 200). */
export function serviceUnavailableAt(at: GraphQLError): GraphQLError {
  return new GraphQLError(UNAVAILABLE_MESSAGE, {
    nodes: at.nodes,
    source: at.source,
    positions: at.positions,
    path: at.path,
    extensions: { code: ErrorCode.SERVICE_UNAVAILABLE },
  });
}

export function badRequest(message: string): GraphQLError {
  return requestError(message, ErrorCode.BAD_REQUEST, { status: 400 });
}

/**
 * Step-up (spec Multi-factor rules 6, RFC 9470): the caller is allowed, but the token's sign-in is too weak or too
 * old. At the field's path, with the RFC 9470 parameters in `extensions` (`acr_values`, `max_age`). Like the
 * route-level UNAUTHENTICATED it is 401 with the `WWW-Authenticate` challenge under
 * application/graphql-response+json, and 200 (the challenge header still sent) under application/json.
 * `challenge` is the requirement the header states: the combined one when a response carries several.
 */
export function insufficientUserAuthentication(
  requirement: StepUpRequirement,
  at?: GraphQLError,
  challenge: StepUpRequirement = requirement,
): GraphQLError {
  return new GraphQLError(`${stepUpDescription(requirement)}.`, {
    nodes: at?.nodes,
    source: at?.source,
    positions: at?.positions,
    path: at?.path,
    extensions: {
      code: ErrorCode.INSUFFICIENT_USER_AUTHENTICATION,
      ...stepUpParameters(requirement),
      http: { status: 401, spec: true, headers: { 'WWW-Authenticate': stepUpChallengeHeader(challenge) } },
    },
  });
}
