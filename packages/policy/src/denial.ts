import { CodedError } from '@latchkey/errors';
import type { DenialReason } from './types.js';

const MESSAGES: Record<DenialReason, string> = {
  unauthenticated: 'Authentication is required.',
  forbidden: 'You are not allowed to do this.',
};

/**
 * Thrown by `authorize` (spec Events 3). Not an HTTP error: the edges convert it (GraphQL error, REST
 * body, socket close). Its message is fixed and names neither the policy nor the ability; those are
 * properties for logs and events only.
 */
export class AuthorizationDenied extends CodedError<'AUTHORIZATION_DENIED'> {
  readonly status: 401 | 403;

  constructor(
    readonly reason: DenialReason,
    readonly policy: string,
    readonly ability: string,
  ) {
    super('AuthorizationDenied', 'AUTHORIZATION_DENIED', MESSAGES[reason]);
    this.status = reason === 'unauthenticated' ? 401 : 403;
  }
}

export function isAuthorizationDenied(error: unknown): error is AuthorizationDenied {
  return error instanceof AuthorizationDenied;
}
