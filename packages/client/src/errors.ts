/** One GraphQL error as the server sends it (spec "Error object"). */
export interface GraphQLErrorShape {
  message: string;
  locations?: { line: number; column: number }[];
  path?: (string | number)[];
  extensions?: Record<string, unknown> & { code?: string };
}

/**
 * A request that did not give the data asked for. `errors` are the server's GraphQL errors (empty for a
 * transport failure), `status` the HTTP status, `data` whatever partial data came back.
 */
export class GraphQLRequestError extends Error {
  override readonly name: string = 'GraphQLRequestError';
  constructor(
    message: string,
    readonly errors: readonly GraphQLErrorShape[],
    readonly status: number,
    readonly data?: unknown,
  ) {
    super(message);
  }
  /** The first error's `extensions.code`, when there is one. */
  get code(): string | undefined {
    return this.errors[0]?.extensions?.code;
  }
}

/** No valid credential (UNAUTHENTICATED): sign in, or refresh the access token, and retry. */
export class UnauthenticatedError extends GraphQLRequestError {
  override readonly name = 'UnauthenticatedError';
}

/** Signed in, but not allowed (FORBIDDEN). */
export class ForbiddenError extends GraphQLRequestError {
  override readonly name = 'ForbiddenError';
}

/**
 * Allowed, but the sign-in behind the token is too weak or too old (INSUFFICIENT_USER_AUTHENTICATION, RFC 9470):
 * start a new authorization request with these `acr_values` / `max_age`, then retry the operation.
 */
export class StepUpRequiredError extends GraphQLRequestError {
  override readonly name = 'StepUpRequiredError';
  constructor(
    message: string,
    errors: readonly GraphQLErrorShape[],
    status: number,
    data: unknown,
    /** space-separated acr values the operation needs, when it needs a level */
    readonly acrValues: string | undefined,
    /** the oldest sign-in (seconds) the operation accepts, when it needs a recent one */
    readonly maxAge: number | undefined,
  ) {
    super(message, errors, status, data);
  }
}

/** The server could not be reached, or did not answer with a GraphQL response. */
export class NetworkError extends GraphQLRequestError {
  override readonly name = 'NetworkError';
}

/** The most specific error for a response's errors: a step-up first, then UNAUTHENTICATED, then FORBIDDEN. */
export function errorFor(errors: readonly GraphQLErrorShape[], status: number, data: unknown): GraphQLRequestError {
  const message = errors.map((error) => error.message).join('; ') || `HTTP ${status}`;
  const coded = (code: string) => errors.find((error) => error.extensions?.code === code);
  const stepUp = coded('INSUFFICIENT_USER_AUTHENTICATION');
  if (stepUp) {
    const { acr_values: acrValues, max_age: maxAge } = stepUp.extensions ?? {};
    return new StepUpRequiredError(
      message,
      errors,
      status,
      data,
      typeof acrValues === 'string' ? acrValues : undefined,
      typeof maxAge === 'number' ? maxAge : undefined,
    );
  }
  if (coded('UNAUTHENTICATED')) return new UnauthenticatedError(message, errors, status, data);
  if (coded('FORBIDDEN')) return new ForbiddenError(message, errors, status, data);
  return new GraphQLRequestError(message, errors, status, data);
}
