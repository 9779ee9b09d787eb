import { CodedError } from '@latchkey/errors';

/**
 * Failures of the domain services that every entry point reports the same way (GraphQL `extensions.code`,
 * REST status). Messages are fixed and safe to show; denials are `AuthorizationDenied` from the policy layer.
 */
export abstract class DomainError extends CodedError<'NOT_FOUND' | 'BAD_USER_INPUT'> {
  abstract readonly status: 400 | 404;
}

/** Missing, or hidden because its existence is sensitive (spec Authorization 6): both answer alike. */
export class NotFoundError extends DomainError {
  declare readonly code: 'NOT_FOUND';
  readonly status = 404;
  constructor() {
    super('NotFoundError', 'NOT_FOUND', 'The requested record was not found.');
  }
}

/** Input that is well-formed for the transport but unacceptable (a malformed id, an over-long title). */
export class InvalidInputError extends DomainError {
  declare readonly code: 'BAD_USER_INPUT';
  readonly status = 400;
  constructor(
    message: string,
    /** the input field at fault, e.g. ['input', 'title'] */
    readonly field?: readonly string[],
  ) {
    super('InvalidInputError', 'BAD_USER_INPUT', message);
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}

/** An expected business failure, reported as data (spec Errors 5). */
export interface UserError {
  field: string[] | null;
  message: string;
  code: 'TITLE_TAKEN' | 'INVALID_STATE' | 'LAST_OWNER';
}
