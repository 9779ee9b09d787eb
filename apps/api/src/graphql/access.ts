import { authorize, isAuthorizationDenied, type Ability, type AuthorizeOptions } from '@latchkey/policy';
import type { Subject } from '../domain/subject.js';
import type { GraphQLContext } from './context.js';
import { notFound } from './errors.js';

/** The caller's volatile attributes, loaded once per request. */
export const subjectOf = (context: GraphQLContext): Promise<Subject | null> =>
  context.app.subjects(context, context.caller?.subject ?? null);

/**
 * Record level where existence is sensitive (spec Authorization 6): a denial answers exactly like a
 * missing record (NOT_FOUND), while the denial is still published by `authorize`.
 */
export function authorizeOrHide<Args extends unknown[]>(
  subject: Subject | null,
  ability: Ability<Subject, Args>,
  args: Args,
  options: AuthorizeOptions,
): void {
  try {
    authorize(subject, ability, args, options);
  } catch (error) {
    if (isAuthorizationDenied(error)) throw notFound();
    throw error;
  }
}
