import type { DomainRequest } from '../domain/access.js';
import type { Subject } from '../domain/subject.js';
import type { GraphQLContext } from './context.js';

/** The caller's volatile attributes, loaded once per request. */
export const subjectOf = (context: GraphQLContext): Promise<Subject | null> =>
  context.app.subjects(context, context.caller?.subject ?? null);

/** What the domain services need, for the resolver `handler` (named in denial events). */
export async function domainRequest(context: GraphQLContext, handler: string): Promise<DomainRequest> {
  return { db: context.app.db, subject: await subjectOf(context), loaders: context.app.loaders(context), handler, authentication: context.caller };
}
