import { authorize, isAuthorizationDenied, type Ability } from '@latchkey/policy';
import type { Database } from '@latchkey/db';
import type { DocumentEventRecorder } from './document-events.js';
import type { AuthenticationEvidence } from '@latchkey/auth/tokens';
import type { AuditTrail } from '@latchkey/auth';
import { NotFoundError } from './errors.js';
import type { RequestScope } from './request-scope.js';
import type { LoaderFactory, RequestLoaders } from './loaders.js';
import type { RequestCaller, Subject, SubjectLoader } from './subject.js';

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
  /** records security events (role changes, legal holds) once their change has committed */
  audit: AuditTrail;
  /** the request id, for the audit trail; absent where there is none (the CLI) */
  requestId?: string;
}

/** The per-request memos and the event recorder every entry point's domain requests are built from. */
export interface DomainServices {
  /** the caller's volatile attributes, loaded once per request scope */
  subjects: SubjectLoader;
  /** batched lookups, one set per request scope */
  loaders: LoaderFactory;
  /** records document changes in the event outbox (subscriptions) */
  events: DocumentEventRecorder;
  /** records security events */
  audit: AuditTrail;
}

/** Who is asking, through which view of the database, and from which entry point. */
export interface DomainRequestInput {
  /** the database as this request sees it (its deadline) */
  db: Database;
  caller: RequestCaller;
  handler: string;
}

/**
 * The one builder of a `DomainRequest`, for GraphQL, REST and the CLI alike: `scope` keys the per-request memos
 * (the HTTP request, a GraphQL context, or one subscription event), so however many fields or checks ask, the
 * subject and the loaders are made once.
 */
export async function openDomainRequest(services: DomainServices, scope: RequestScope, input: DomainRequestInput): Promise<DomainRequest> {
  return {
    db: input.db,
    subject: await services.subjects.load(scope, input.caller, input.db),
    loaders: services.loaders(scope, input.db),
    handler: input.handler,
    authentication: input.caller,
    events: services.events,
    audit: services.audit,
    ...(scope.requestId ? { requestId: scope.requestId } : {}),
  };
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
