import { CodedError } from '@latchkey/errors';
import { applyDirectiveRules, fieldRulesOf, type Ability, type FieldRule, type FieldRuleOptions } from '@latchkey/policy';
import type { GraphQLSchema } from 'graphql';
import { createSchema } from 'graphql-yoga';
import { AccountPolicy, DocumentPolicy, OrganizationPolicy } from '../domain/policies.js';
import type { Subject } from '../domain/subject.js';
import { MODEL_SERVED_FIELDS } from '../generated/model-served.js';
import { typeDefs } from '../generated/type-defs.js';
import { resolverGaps, type CompletenessCheck } from './completeness.js';
import type { GraphQLContext } from './context.js';
import { applyStepUpRules } from './plugins/use-step-up.js';
import { accountResolvers } from './resolvers/account.js';
import { connectedAppResolvers } from './resolvers/connected-apps.js';
import { documentResolvers } from './resolvers/documents.js';
import { passkeyResolvers } from './resolvers/passkeys.js';
import { DateTime } from './resolvers/scalars.js';
import { sessionResolvers } from './resolvers/sessions.js';
import { budgetDatabaseFree, budgetResolvers } from './resolvers/budget.js';
import { statusDatabaseFree, statusResolvers } from './resolvers/status.js';
import { subscriptionResolvers } from './resolvers/subscriptions.js';
import { viewerDatabaseFree, viewerResolvers } from './resolvers/viewer.js';

/** The resolver maps, merged by the schema. */
export const resolverMaps = [
  { DateTime },
  statusResolvers,
  budgetResolvers,
  viewerResolvers,
  accountResolvers,
  documentResolvers,
  passkeyResolvers,
  sessionResolvers,
  connectedAppResolvers,
  subscriptionResolvers,
] as const;

/**
 * Every schema field has a resolver above or a fitting property on its type's mapped model (codegen.ts
 * `mappers`): otherwise this line fails typecheck, naming each `Type.field`. A resolver map must keep its own
 * literal type for this (`satisfies Resolvers`, never `: Resolvers`).
 */
const resolverCompleteness: CompletenessCheck<
  typeof statusResolvers &
    typeof budgetResolvers &
    typeof viewerResolvers &
    typeof accountResolvers &
    typeof documentResolvers &
    typeof passkeyResolvers &
    typeof sessionResolvers &
    typeof connectedAppResolvers &
    typeof subscriptionResolvers
> = 'complete';

/** A schema field nothing serves (a build made without typecheck): start-up stops, naming each (code SCHEMA_INCOMPLETE). */
export class SchemaGapError extends CodedError<'SCHEMA_INCOMPLETE'> {
  constructor(readonly fields: readonly string[]) {
    super(
      'SchemaGapError',
      'SCHEMA_INCOMPLETE',
      `${fields.join(', ')}: no resolver and no fitting model property (add a resolver in apps/api/src/graphql/resolvers/, or the property to the type's model)`,
    );
  }
}

/** The fields answered without the database; every other field needs it (and is refused during an outage). */
export const DATABASE_FREE_FIELDS: ReadonlySet<string> = new Set([...statusDatabaseFree, ...budgetDatabaseFree, ...viewerDatabaseFree]);

/**
 * The executable schema with the route- and field-level marks (`@auth`, `@can`) enforced before the
 * resolvers they guard; field-level enforcement is on, so row-dependent marks run once per returned row.
 * `@stepUp` marks are applied first, so they sit inside: checked after `@auth`/`@can`, before the resolver.
 */
export function buildSchema() {
  void resolverCompleteness;
  const executable = createSchema<GraphQLContext>({ typeDefs, resolvers: resolverMaps as never });
  const gaps = resolverGaps(executable, resolverMaps, MODEL_SERVED_FIELDS);
  if (gaps.length > 0) throw new SchemaGapError(gaps);
  const schema = applyStepUpRules(executable);
  return applyDirectiveRules<Subject, GraphQLContext>(schema, { ...MARKED_ABILITIES, fieldLevel: true });
}

/** The abilities the schema's marks (`@auth(role:)`, `@can(ability:)`) may name. */
const MARKED_ABILITIES: FieldRuleOptions<Subject> = {
  policies: [AccountPolicy, OrganizationPolicy, DocumentPolicy],
  roleAbility: AccountPolicy.holdsRole as Ability<Subject, [string]>,
};

/** The field rules the schema declares for one type, for REST's bodies of the same records. */
export const fieldRulesOfType = (schema: GraphQLSchema, typeName: string): FieldRule<Subject>[] =>
  fieldRulesOf(schema, typeName, MARKED_ABILITIES);
