import { authorize, isAuthorizationDenied, type Ability } from '@latchkey/policy';
import type { Database } from '@latchkey/db';
import type { DocumentEventRecorder } from '../events/outbox.js';
import type { AuthenticationEvidence } from '@latchkey/auth/tokens';
import { NotFoundError } from './errors.js';
import type { RequestLoaders } from './loaders.js';
import type { Subject } from './subject.js';

/** What a domain service needs from the entry point that calls it (GraphQL, REST or CLI). */
export interface DomainRequest {
  db: Database;
  /** the caller's volatile attributes, read at decision time; null for a guest */
  subject: Subject | null;
  loaders: RequestLoaders;
  /** the entry point, reported in denial events (e.g. "Mutation.deleteDocument", "DELETE /api/documents/:id") */
  handler: string;
  /**
   * How the caller signed in (the verified token's `acr` and `auth_time`), for step-up checks that depend on the
   * arguments (spec Multi-factor rules 6). Missing: no sign-in to judge, so such a check asks for a step-up.
   */
  authentication?: AuthenticationEvidence | null;
  /** records every change to a document in the event outbox, in the change's transaction (subscriptions) */
  events: DocumentEventRecorder;
}

/**
 * Record level where existence is sensitive (spec Authorization 6): a denial answers exactly like a
 * missing record (NOT_FOUND), while the denial is still published by `authorize`.
 */
export function authorizeOrHide<Args extends unknown[]>(request: DomainRequest, ability: Ability<Subject, Args>, args: Args): void {
  try {
    authorize(request.subject, ability, args, { handler: request.handler });
  } catch (error) {
    if (isAuthorizationDenied(error)) throw new NotFoundError();
    throw error;
  }
}

export function authorizeIn<Args extends unknown[]>(request: DomainRequest, ability: Ability<Subject, Args>, args: Args): void {
  authorize(request.subject, ability, args, { handler: request.handler });
}
