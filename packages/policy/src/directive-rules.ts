import { handleMaybePromise } from '@whatwg-node/promise-helpers';
import {
  defaultFieldResolver,
  getDirectiveValues,
  isObjectType,
  type GraphQLDirective,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
} from 'graphql';
import { authorize, can } from './decide.js';
import { isAuthorizationDenied } from './denial.js';
import { governingMarks, ruleDirectives, type RuleDirectiveNames } from './route-rules.js';
import type { Ability } from './types.js';

/**
 * What the directive rules ask of a GraphQL context: the caller as the abilities see it. The app's context gives it
 * where the app makes its context, so the one subject of a request is the one every check sees.
 */
export interface DirectiveRulesContext<User> {
  /**
   * The caller as the abilities see it, or null for a guest; asked once per checked field (memoise it per request).
   * Answer the value itself, not a promise, once it is known: the check then runs without one.
   */
  subjectAtHand(): User | null | Promise<User | null>;
}

export interface DirectiveRulesOptions<User> extends RuleDirectiveNames {
  /** Policies whose abilities `@can(ability: "Policy.ability")` may name. */
  policies: readonly ({ readonly name: string } & object)[];
  /** The ability behind `@auth(role: X)`, called as `(subject, role)`. Required when the schema uses `role`. */
  roleAbility?: Ability<User, [string]>;
  /**
   * Field-level enforcement (spec Authorization 13): when on, marks on fields of object types other than the
   * root types are checked too, once per returned row, and `@can` abilities receive the row. When off they are
   * ignored and only root fields (the routes) are guarded.
   * @default false
   */
  fieldLevel?: boolean;
}

type Rule<User> = {
  ability: Ability<User, any[]>;
  args: (source: unknown) => unknown[];
  /** `@can(..., silent: true)`: a denied field is simply null, with no error (the denial is still published) */
  silent: boolean;
};

/** `@auth` without a role: any signed-in caller. */
const signedIn: Ability<unknown, []> = Object.freeze({
  policy: 'RoutePolicy',
  name: 'signedIn',
  binding: true,
  check: (subject: unknown) => subject !== null,
  before: undefined,
  scope: undefined,
});

const wrapped = new WeakSet<GraphQLSchema>();

/** What reads a field's marks into rules: the one reader of `@auth` / `@can` for every edge. */
export type FieldRuleOptions<User> = RuleDirectiveNames & Pick<DirectiveRulesOptions<User>, 'policies' | 'roleAbility'>;

function createRuleReader<User>(schema: GraphQLSchema, options: FieldRuleOptions<User>) {
  const names = ruleDirectives(options);
  const directives = new Map<string, GraphQLDirective>();
  for (const name of [names.auth, names.can]) {
    const directive = schema.getDirective(name);
    if (directive) directives.set(name, directive);
  }

  function abilityNamed(qualified: string, where: string): Ability<User, any[]> {
    const [policyName, abilityName, ...rest] = qualified.split('.');
    const policy = options.policies.find((candidate) => candidate.name === policyName) as Record<string, unknown> | undefined;
    const ability = rest.length === 0 && abilityName && abilityName !== 'name' ? policy?.[abilityName] : undefined;
    if (!ability || typeof ability !== 'object') throw new Error(`${where}: @${names.can}(ability: "${qualified}") names no known ability`);
    return ability as Ability<User, any[]>;
  }

  function rulesOf(type: GraphQLObjectType, field: GraphQLField<unknown, unknown>, atRoot: boolean): Rule<User>[] {
    const marks = governingMarks(type, field, names);
    if (marks.some((mark) => mark.name.value === names.public)) return [];
    const where = `${type.name}.${field.name}`;
    const rules: Rule<User>[] = [];
    for (const mark of marks) {
      const values = getDirectiveValues(directives.get(mark.name.value)!, { directives: [mark] } as never) ?? {};
      if (mark.name.value === names.auth) {
        const role = values['role'] as string | undefined;
        if (role === undefined) rules.push({ ability: signedIn as Ability<User, any[]>, args: () => [], silent: false });
        else {
          if (!options.roleAbility) throw new Error(`${where}: @${names.auth}(role:) needs the roleAbility option`);
          rules.push({ ability: options.roleAbility, args: () => [role], silent: false });
        }
      } else {
        rules.push({
          ability: abilityNamed(String(values['ability']), where),
          args: atRoot ? () => [] : (source) => [source],
          silent: values['silent'] === true,
        });
      }
    }
    return rules;
  }

  return rulesOf;
}

/**
 * Route and field level from SDL metadata (spec Authorization 1, 3, 4, 5, 12, 13): `@auth(role:)` and
 * `@can(ability:)` are checked before the resolver runs, from the caller (and, at field level, the row)
 * alone, the caller as the context gives it (`DirectiveRulesContext`). A field's own marks replace its type's
 * (rule 1); `@public` on the field clears the type's marks.
 * A denial is an `AuthorizationDenied` at the field's path: null there, UNAUTHENTICATED for a guest and
 * FORBIDDEN for a known user, published on the denial stream (convert it with `useAuthorizationErrors`);
 * with `@can(ability: "...", silent: true)` the field is simply null (silent hiding, spec Authorization 12).
 *
 * The resolvers of marked fields are wrapped once per schema, in place; unmarked fields cost nothing.
 */
export function applyDirectiveRules<User, Context extends DirectiveRulesContext<User>>(
  schema: GraphQLSchema,
  options: DirectiveRulesOptions<User>,
): GraphQLSchema {
  if (wrapped.has(schema)) return schema;
  wrapped.add(schema);
  const roots = new Set(
    [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(Boolean) as GraphQLObjectType[],
  );

  const rulesOf = createRuleReader<User>(schema, options);

  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    const atRoot = roots.has(type);
    if (!atRoot && !options.fieldLevel) continue;
    for (const field of Object.values(type.getFields())) {
      const rules = rulesOf(type, field, atRoot);
      if (rules.length === 0) continue;
      const resolve: GraphQLFieldResolver<unknown, Context> = field.resolve ?? defaultFieldResolver;
      const handler = `${type.name}.${field.name}`;
      // A decision from the caller already at hand runs synchronously: a page's marked fields (once per row)
      // then cost no promise each. Either way the rules run before the resolver, in order.
      const guarded = (subject: User | null, source: unknown, args: unknown, context: Context, info: GraphQLResolveInfo) => {
        for (const rule of rules) {
          try {
            authorize(subject, rule.ability, rule.args(source), { handler });
          } catch (error) {
            if (rule.silent && isAuthorizationDenied(error)) return null;
            throw error;
          }
        }
        return resolve(source, args as never, context, info);
      };
      field.resolve = (source, args, context, info) => {
        return handleMaybePromise(
          () => context.subjectAtHand(),
          (subject) => guarded(subject, source, args, context, info),
        );
      };
    }
  }
  return schema;
}

/** One field's rules for an edge that shapes records itself (REST): whether the caller may see the field of this row. */
export interface FieldRule<User> {
  field: string;
  allows(subject: User | null, row: unknown): boolean;
}

/**
 * The field-level rules of one object type, read from the same marks `applyDirectiveRules` enforces in GraphQL
 * (`@auth`, `@can`, a type's marks and `@public`), for an edge that builds the type's records itself: a REST body
 * leaves out what the caller may not see. Answers with `can` (yes or no, nothing published): leaving a field out
 * of a body is not a denied request.
 */
export function fieldRulesOf<User>(schema: GraphQLSchema, typeName: string, options: FieldRuleOptions<User>): FieldRule<User>[] {
  const type = schema.getType(typeName);
  if (!isObjectType(type)) throw new Error(`${typeName} is not an object type of the schema`);
  const rulesOf = createRuleReader(schema, options);
  const fieldRules: FieldRule<User>[] = [];
  for (const field of Object.values(type.getFields())) {
    const rules = rulesOf(type, field, false);
    if (rules.length === 0) continue;
    fieldRules.push({
      field: field.name,
      allows: (subject, row) => rules.every((rule) => can(subject, rule.ability, ...rule.args(row))),
    });
  }
  return fieldRules;
}

/**
 * Envelop plugin form of `applyDirectiveRules`: wraps the resolvers of the schema in use. Register
 * `useAuthorizationErrors()` as well so denials leave as UNAUTHENTICATED / FORBIDDEN errors.
 */
export function useDirectiveRules<User>(options: DirectiveRulesOptions<User>) {
  return {
    onSchemaChange({ schema }: { schema: GraphQLSchema }) {
      applyDirectiveRules<User, DirectiveRulesContext<User>>(schema, options);
    },
  };
}
