import type { DomainRequest } from '../domain/access.js';
import type { Subject } from '../domain/subject.js';
import type { GraphQLContext } from './context.js';

/**
 * What per-request memos (the subject, the loaders) are keyed by: the request, or for a subscription the
 * event being delivered, so every event is judged on the subscriber's attributes as they are then.
 */
const scopeOf = (context: GraphQLContext): object => context.eventScope ?? context;

/** The caller's volatile attributes, loaded once per request (once per event for subscriptions). */
export const subjectOf = (context: GraphQLContext): Promise<Subject | null> =>
  context.app.subjects(scopeOf(context), context.caller?.subject ?? null);

/** Batched lookups, one set per request (per event for subscriptions). */
export const loadersOf = (context: GraphQLContext) => context.app.loaders(scopeOf(context));

/** What the domain services need, for the resolver `handler` (named in denial events). */
export async function domainRequest(context: GraphQLContext, handler: string): Promise<DomainRequest> {
  return { db: context.app.db, subject: await subjectOf(context), loaders: loadersOf(context), handler, authentication: context.caller, events: context.app.events };
}
