import { openDomainRequest } from '../domain/access.js';
/**
 * What per-request memos (the subject, the loaders, the database view) are keyed by: the request, or for a
 * subscription the event being delivered, so every event is judged on the subscriber's attributes as they are
 * then, under a deadline of its own.
 */
const scopeOf = (context) => context.eventScope ?? context;
const views = new WeakMap();
/**
 * The database as this request (or this event's delivery) sees it: every statement bounded by its deadline
 * (DATABASE_TIMEOUT from the start of execution). Passed explicitly rather than through AsyncLocalStorage,
 * which on Node 20 taxes every promise of the process once it is in use.
 */
export function dbOf(context) {
    const scope = scopeOf(context);
    let db = views.get(scope);
    if (!db) {
        scope.deadline ??= performance.now() + context.app.databaseTimeoutMs;
        views.set(scope, (db = context.app.database.until(scope.deadline)));
    }
    return db;
}
/** The caller's volatile attributes, loaded once per request (once per event for subscriptions). */
export const subjectOf = (context) => context.app.subjects(scopeOf(context), context.caller?.subject ?? null, dbOf(context));
/** Batched lookups, one set per request (per event for subscriptions). */
export const loadersOf = (context) => context.app.loaders(scopeOf(context), dbOf(context));
/** What the domain services need, for the resolver `handler` (named in denial events). */
export function domainRequest(context, handler) {
    const caller = context.caller;
    return openDomainRequest(context.app, scopeOf(context), {
        db: dbOf(context),
        userId: caller?.subject ?? null,
        handler,
        authentication: caller,
    });
}
//# sourceMappingURL=access.js.map