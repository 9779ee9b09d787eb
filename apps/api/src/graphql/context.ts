import { openDomainRequest, type DomainRequest, type DomainServices } from '../domain/request.js';
import { databaseOf, type RequestDatabase, type RequestScope } from '../domain/request-scope.js';
import type { YogaInitialContext } from 'graphql-yoga';
import type { DirectiveRulesContext } from '@latchkey/policy';
import type { Caller } from '@latchkey/auth/tokens';
import type { Database } from '@latchkey/db';
import type { AuditTrail } from '@latchkey/auth';
import type { SubscriptionHub } from '../events/subscription-hub.js';
import type { SessionServices } from '../domain/sessions.js';
import type { ConnectedAppServices } from '../domain/connected-apps.js';
import { readCallerWithDocumentPage, type DocumentListInput } from '../domain/documents.js';
import type { Subject } from '../domain/subject.js';
import type { Budgets } from '../budget/budgets.js';

/** What resolvers may use; built once at start-up. */
export interface AppServices extends DomainServices {
  /** the database; a request reads it through its own view (`dbOf`), bounded by the request's deadline */
  database: RequestDatabase;
  service: { name: string; version: string };
  /** this instance's subscriptions */
  subscriptions: SubscriptionHub;
  /** the sessions ended on any instance, and the way to end them */
  sessions: SessionServices;
  /** third-party apps people allowed: revoking one, their names */
  apps: ConnectedAppServices;
  /** records security events (docs/audit.md); never throws, never waits for the database */
  audit: AuditTrail;
  /** the callers' cost budgets (`Query.rateLimit` reads them); undefined: API_BUDGET=off */
  budgets?: Budgets;
}

/**
 * What the context factory (`operationContext`) adds to Yoga's initial context: an operation's request scope (its
 * request id, its HTTP request, its deadline from the start of execution), the caller and the app's services, and
 * the caller's attributes as the directive rules ask for them (`subjectAtHand`).
 */
export interface RequestContext extends RequestScope, DirectiveRulesContext<Subject> {
  /** the verified caller, or null for a guest (spec Authentication 2); set by `createOperationCallers`' plugin (operation-callers.ts) */
  caller: Caller;
  app: AppServices;
  /** set by a subscription before each event is resolved: the scope of that event's fresh memos */
  eventScope?: RequestScope;
}

export type GraphQLContext = YogaInitialContext & RequestContext;

/** Each operation's context as Yoga's context factory makes it, over HTTP and over WebSocket; the caller comes next. */
export const operationContext = (app: AppServices, requestId: string) =>
  ({ requestId, app, subjectAtHand: subjectAtHandOfContext }) as RequestContext;

/** The directive rules' `context.subjectAtHand()`: the one subject of the request, as the resolvers see it too. */
function subjectAtHandOfContext(this: GraphQLContext): Subject | null | Promise<Subject | null> {
  return subjectAtHand(this);
}

/**
 * What per-request memos (the subject, the loaders, the database view) are keyed by: the request, or for a
 * subscription the event being delivered, so every event is judged on the subscriber's attributes as they are
 * then, under a deadline of its own.
 */
const scopeOf = (context: GraphQLContext): RequestScope => context.eventScope ?? context;

/**
 * The database as this request (or this event's delivery) sees it: every statement bounded by its deadline
 * (DATABASE_TIMEOUT from the start of execution).
 */
export const dbOf = (context: GraphQLContext): Database => databaseOf(scopeOf(context), context.app.database);

/** The caller's volatile attributes, loaded once per request (once per event for subscriptions). */
export const subjectOf = (context: GraphQLContext): Promise<Subject | null> =>
  context.app.subjects.load(scopeOf(context), context.caller, dbOf(context));

/**
 * The caller's attributes if this request has read them already (null for a guest), else undefined: lets a
 * per-row resolver answer without a promise once the page's first statement has read them.
 */
export const subjectNow = (context: GraphQLContext): Subject | null | undefined =>
  context.app.subjects.now(scopeOf(context), context.caller);

/** The caller's attributes: at once when already read, else the promise of reading them. */
export function subjectAtHand(context: GraphQLContext): Subject | null | Promise<Subject | null> {
  const now = subjectNow(context);
  return now === undefined ? subjectOf(context) : now;
}

/** Batched lookups, one set per request (per event for subscriptions). */
export const loadersOf = (context: GraphQLContext) => context.app.loaders(scopeOf(context), dbOf(context));

/** What the domain services need, for the resolver `handler` (named in denial events). */
export function domainRequest(context: GraphQLContext, handler: string): Promise<DomainRequest> {
  return openDomainRequest(context.app, scopeOf(context), { db: dbOf(context), caller: context.caller, handler });
}

/**
 * `domainRequest` for a page of documents: when the request has not read its caller yet, the caller's attributes may
 * come in the page's own statement (`readCallerWithDocumentPage`).
 */
export function domainRequestForPage(context: GraphQLContext, handler: string, page: DocumentListInput): Promise<DomainRequest> {
  readCallerWithDocumentPage(context.app, scopeOf(context), { db: dbOf(context), caller: context.caller }, page);
  return domainRequest(context, handler);
}
