import { applyDirectiveRules, type Ability } from '@latchkey/policy';
import { createSchema } from 'graphql-yoga';
import { AccountPolicy, DocumentPolicy, OrganizationPolicy } from '../domain/policies.js';
import type { Subject } from '../domain/subject.js';
import { subjectOf } from './access.js';
import type { Resolvers } from '../generated/resolvers.js';
import { typeDefs } from '../generated/type-defs.js';
import type { GraphQLContext } from './context.js';
import { applyStepUpRules } from './plugins/use-step-up.js';
import { accountResolvers } from './resolvers/account.js';
import { documentResolvers } from './resolvers/documents.js';
import { passkeyResolvers } from './resolvers/passkeys.js';
import { DateTime } from './resolvers/scalars.js';
import { statusDatabaseFree, statusResolvers } from './resolvers/status.js';
import { subscriptionResolvers } from './resolvers/subscriptions.js';
import { viewerDatabaseFree, viewerResolvers } from './resolvers/viewer.js';

const resolvers: Resolvers[] = [{ DateTime }, statusResolvers, viewerResolvers, accountResolvers, documentResolvers, passkeyResolvers, subscriptionResolvers];

/** The fields answered without the database; every other field needs it (and is refused during an outage). */
export const DATABASE_FREE_FIELDS: ReadonlySet<string> = new Set([...statusDatabaseFree, ...viewerDatabaseFree]);

/**
 * The executable schema with the route- and field-level marks (`@auth`, `@can`) enforced before the
 * resolvers they guard; field-level enforcement is on, so row-dependent marks run once per returned row.
 * `@stepUp` marks are applied first, so they sit inside: checked after `@auth`/`@can`, before the resolver.
 */
export function buildSchema() {
  const schema = applyStepUpRules(createSchema<GraphQLContext>({ typeDefs, resolvers: resolvers as never }));
  return applyDirectiveRules<Subject, GraphQLContext>(schema, {
    subject: subjectOf,
    policies: [AccountPolicy, OrganizationPolicy, DocumentPolicy],
    roleAbility: AccountPolicy.holdsRole as Ability<Subject, [string]>,
    fieldLevel: true,
  });
}
