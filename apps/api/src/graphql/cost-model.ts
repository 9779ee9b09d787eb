import {
  isInterfaceType,
  isObjectType,
  Kind,
  valueFromASTUntyped,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type OperationDefinitionNode,
} from 'graphql';

// The parts of an operation both cost figures read: the estimate before execution (use-cost-limit.ts) and the
// actual cost after it (actual-cost.ts). Kept here so that the two count the same fields the same way.

/** The document's fragment definitions, by name. */
export function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return fragments;
}

/** The schema field a selection names on its parent type; undefined for a union (no fields) or an unknown name. */
export function fieldOn(parent: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined {
  return isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
}

/** Fields that cost nothing wherever an operation asks for them: the caller's budget, which asking never spends. */
const FREE_FIELDS: ReadonlySet<string> = new Set(['Query.rateLimit']);

/**
 * Fields the cost leaves out, with everything below them: introspection (`__schema`, `__type`; the budgets charge
 * it a stated cost of their own), `__typename`, and FREE_FIELDS.
 */
export const isLeftOutOfCost = (parent: GraphQLCompositeType, name: string): boolean =>
  name.startsWith('__') || FREE_FIELDS.has(`${parent.name}.${name}`);

/**
 * A variable's value as execution will see it: the request's value when the request names the variable (null
 * included), else the operation's default for it (undefined for none).
 */
export function variableValue(
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | null | undefined,
  name: string,
): unknown {
  if (variables != null && Object.hasOwn(variables, name)) return variables[name];
  const fallback = operation.variableDefinitions?.find((definition) => definition.variable.name.value === name)?.defaultValue;
  return fallback === undefined ? undefined : valueFromASTUntyped(fallback);
}
