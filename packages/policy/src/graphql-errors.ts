import { GraphQLError, type ExecutionResult } from 'graphql';
import { AuthorizationDenied } from './denial.js';

const CODES = { unauthenticated: 'UNAUTHENTICATED', forbidden: 'FORBIDDEN' } as const;

/**
 * The GraphQL form of a denial (spec Events 3): `extensions.code` UNAUTHENTICATED or FORBIDDEN at the
 * field's path, the fixed message, and no HTTP status (a denied field is partial success: 200). Neither
 * the policy nor the ability is named.
 */
export function denialToGraphQLError(denial: AuthorizationDenied, at?: GraphQLError): GraphQLError {
  return new GraphQLError(denial.message, {
    nodes: at?.nodes,
    source: at?.source,
    positions: at?.positions,
    path: at?.path,
    extensions: { code: CODES[denial.reason] },
  });
}

/** Replaces resolver errors caused by a denial; leaves every other error alone. */
export function convertDenials<T extends ExecutionResult>(result: T): T {
  if (!result.errors?.some((error) => error.originalError instanceof AuthorizationDenied)) return result;
  return {
    ...result,
    errors: result.errors.map((error) =>
      error.originalError instanceof AuthorizationDenied ? denialToGraphQLError(error.originalError, error) : error,
    ),
  };
}

interface ExecuteDonePayload {
  result: ExecutionResult | AsyncIterable<ExecutionResult>;
  setResult(result: ExecutionResult): void;
}

/**
 * Envelop plugin: converts denials thrown in resolvers before error masking would hide them as
 * INTERNAL_SERVER_ERROR. Register it before the masking plugin (in Yoga: any user plugin).
 */
export function useAuthorizationErrors() {
  // One shared hook object: nothing is allocated per request.
  const afterExecute = {
    onExecuteDone({ result, setResult }: ExecuteDonePayload) {
      if (Symbol.asyncIterator in result) return;
      const converted = convertDenials(result);
      if (converted !== result) setResult(converted);
    },
  };
  return { onExecute: () => afterExecute };
}
