import type { Database } from '@latchkey/db';
import { openDomainRequest, type DomainRequest } from '../domain/access.js';
import { requestMemo } from '../domain/request-memo.js';
import { readCallerWithDocumentPage, type DocumentListInput } from '../domain/documents.js';
import type { Subject } from '../domain/subject.js';
import type { DeadlineScope, GraphQLContext } from './context.js';

/**
 * What per-request memos (the subject, the loaders, the database view) are keyed by: the request, or for a
 * subscription the event being delivered, so every event is judged on the subscriber's attributes as they are
 * then, under a deadline of its own.
 */
const scopeOf = (context: GraphQLContext): DeadlineScope => context.eventScope ?? context;

const views = requestMemo<Database>('database view of the request');

/**
 * The database as this request (or this event's delivery) sees it: every statement bounded by its deadline
 * (DATABASE_TIMEOUT from the start of execution). Passed explicitly rather than through AsyncLocalStorage,
 * which on Node 20 taxes every promise of the process once it is in use.
 */
export function dbOf(context: GraphQLContext): Database {
  const scope = scopeOf(context);
  let db = views.get(scope);
  if (!db) {
    scope.deadline ??= performance.now() + context.app.databaseTimeoutMs;
    views.set(scope, (db = context.app.database.until(scope.deadline)));
  }
  return db;
}

/** The caller's volatile attributes, loaded once per request (once per event for subscriptions). */
export const subjectOf = (context: GraphQLContext): Promise<Subject | null> =>
  context.app.subjects(scopeOf(context), context.caller?.subject ?? null, dbOf(context));

/**
 * The caller's attributes if this request has read them already (null for a guest), else undefined: lets a
 * per-row resolver answer without a promise once the page's first statement has read them.
 */
export const subjectNow = (context: GraphQLContext): Subject | null | undefined =>
  context.app.subjects.now(scopeOf(context), context.caller?.subject ?? null);

/** The caller's attributes: at once when already read, else the promise of reading them. */
export function subjectAtHand(context: GraphQLContext): Subject | null | Promise<Subject | null> {
  const now = subjectNow(context);
  return now === undefined ? subjectOf(context) : now;
}

/** Batched lookups, one set per request (per event for subscriptions). */
export const loadersOf = (context: GraphQLContext) => context.app.loaders(scopeOf(context), dbOf(context));

/** What the domain services need, for the resolver `handler` (named in denial events). */
export function domainRequest(context: GraphQLContext, handler: string): Promise<DomainRequest> {
  const caller = context.caller;
  return openDomainRequest(context.app, scopeOf(context), {
    db: dbOf(context),
    userId: caller?.subject ?? null,
    handler,
    authentication: caller,
  });
}

/**
 * `domainRequest` for a page of documents: when the request has not read its caller yet, the caller's attributes may
 * come in the page's own statement (`readCallerWithDocumentPage`).
 */
export function domainRequestForPage(context: GraphQLContext, handler: string, page: DocumentListInput): Promise<DomainRequest> {
  readCallerWithDocumentPage(context.app, scopeOf(context), { db: dbOf(context), userId: context.caller?.subject ?? null }, page);
  return domainRequest(context, handler);
}
