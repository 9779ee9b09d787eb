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

const isDenial = (error: GraphQLError) => error.originalError instanceof AuthorizationDenied;
const convertAll = (errors: readonly GraphQLError[]) =>
  errors.map((error) => (error.originalError instanceof AuthorizationDenied ? denialToGraphQLError(error.originalError, error) : error));

/** An incremental-delivery payload (@defer/@stream): errors may sit in each of its parts. */
interface IncrementalResult extends ExecutionResult {
  incremental?: readonly (ExecutionResult & { path?: readonly (string | number)[] })[];
}

/** Replaces resolver errors caused by a denial (in the result and in its incremental parts); leaves every other error alone. */
export function convertDenials<T extends ExecutionResult>(result: T): T {
  const incremental = (result as IncrementalResult).incremental;
  const topLevel = result.errors?.some(isDenial) ?? false;
  const nested = incremental?.some((part) => part.errors?.some(isDenial)) ?? false;
  if (!topLevel && !nested) return result;
  return {
    ...result,
    ...(topLevel ? { errors: convertAll(result.errors!) } : {}),
    ...(nested
      ? { incremental: incremental!.map((part) => (part.errors?.some(isDenial) ? { ...part, errors: convertAll(part.errors) } : part)) }
      : {}),
  };
}

interface ResultPayload {
  result: ExecutionResult | AsyncIterable<ExecutionResult>;
  setResult(result: ExecutionResult): void;
}

/** Converts a single result, or each result of a stream (subscriptions, @defer/@stream). */
function afterResult({
  result,
  setResult,
}: ResultPayload): undefined | { onNext(payload: { result: ExecutionResult; setResult(result: ExecutionResult): void }): void } {
  if (Symbol.asyncIterator in result) return streamHooks;
  const converted = convertDenials(result);
  if (converted !== result) setResult(converted);
}
const streamHooks = {
  onNext({ result, setResult }: { result: ExecutionResult; setResult(result: ExecutionResult): void }) {
    const converted = convertDenials(result);
    if (converted !== result) setResult(converted);
  },
};

/**
 * Envelop plugin: converts denials thrown in resolvers before error masking would hide them as
 * INTERNAL_SERVER_ERROR, in single results, incremental (@defer/@stream) results and subscription events alike.
 * Register it before the masking plugin (in Yoga: any user plugin).
 */
export function useAuthorizationErrors() {
  // Shared hook objects: nothing is allocated per request.
  const afterExecute = { onExecuteDone: afterResult };
  const afterSubscribe = { onSubscribeResult: afterResult };
  return { onExecute: () => afterExecute, onSubscribe: () => afterSubscribe };
}
