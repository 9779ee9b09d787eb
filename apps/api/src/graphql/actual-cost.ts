import {
  getNamedType,
  isAbstractType,
  isCompositeType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
  visit,
} from 'graphql';
import { fieldOn, fragmentsOf, isLeftOutOfCost, variableValue } from './cost-model.js';

/** One response key of an object as the operation selects it, with the selections merged below it. */
interface KeyedField {
  key: string;
  /** the selection sets of every selection with this key, in document order; empty for a leaf */
  below: SelectionSetNode[];
  /** the field's named type when it has fields below it; null for a leaf */
  type: GraphQLCompositeType | null;
  /** the place of `below`, once an answer reached it */
  place?: Place;
}

/** One place of the operation (its merged selection sets, of one type): the fields it selects, by runtime type. */
interface Place {
  sets: readonly SelectionSetNode[];
  type: GraphQLCompositeType;
  /** the fields on an object of `type`, when that is an object type */
  fixed?: KeyedField[];
  /** an abstract `type`'s fields by the object's runtime type name ('' for an unknown one) */
  byRuntime?: Map<string, KeyedField[]>;
}

/** The places of one operation, built as answers reach them, for the values its `@skip`/`@include` variables had. */
interface OperationPlans {
  /** the variables some `@skip`/`@include` reads, in the document (the same whatever their values) */
  conditions: string[];
  byValues: Map<string, Place>;
}

/** A parsed document's fragments and its operations' places, for the schema they were built on. */
interface DocumentPlans {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  operations: Map<OperationDefinitionNode, OperationPlans>;
}

/**
 * Yoga's parse cache hands out one document per text: what an operation selects where is worked out once for it
 * (per `@skip`/`@include` outcome) instead of once per answer, so each answer costs only the walk over its data.
 */
const plans = new WeakMap<DocumentNode, DocumentPlans>();
/** Outcomes of `@skip`/`@include` variables remembered per operation. */
const MAX_REMEMBERED_OUTCOMES = 16;

/**
 * The cost an executed operation actually had: each field counted once per item of every enclosing list, as
 * returned. The same model as `estimateCost` (use-cost-limit.ts), read off the response `data` instead of sized in
 * advance:
 * - The operation's selections are walked over `data`, whose keys are response names (aliases). A field counts 1
 *   for each object of its parent where its response key is present, null included (it resolved, to null). A null
 *   object or list counts nothing below it; a list counts each item it returned (a list of lists, each inner
 *   item); a list of scalars counts 1, as a field.
 * - Selections with the same response key (the same field merged from several fragments) count once per object,
 *   and their selections below are merged, as execution merges them.
 * - `@skip`/`@include` are evaluated with the request's variables (else the operation's defaults): what ran.
 * - A fragment (named or inline) applies when its type condition is the object's type or an abstract type that
 *   contains it. The object's type is the parent field's type when that is an object type, else the object's
 *   `__typename` when the response holds it. An object of an abstract type without `__typename` in the response
 *   applies every fragment: of their fields, those whose key the object holds count (so a key two fragments on
 *   different types share counts once, by the first selection of it).
 * - Fields starting with `__` (introspection, `__typename`) and `Query.rateLimit` count nothing, nor does anything
 *   below them, nor a field the object's type (when unknown, the fragment's type) does not have.
 * The figure is at least 0 (the caller applies its own minimum). It equals `estimateCost(...).cost` when every
 * list is as long as the estimate sized it, every fragment applies, no directive drops a field and no response key
 * is selected twice: the estimate counts such fields as if they all resolved, so on full pages it is never lower.
 * Subscriptions: pass each event's data, as each event resolves the selection again. Incremental delivery
 * (`@defer`/`@stream`): pass the data with every payload merged in.
 */
export function actualCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | null | undefined,
  data: unknown,
): number {
  const rootType = schema.getRootType(operation.operation);
  if (!rootType) return 0;
  const { fragments, root } = placesOf(schema, document, operation, variables, rootType);
  const included = (selection: SelectionNode) => isIncluded(selection, operation, variables);
  const fieldsOf = (place: Place, object: Record<string, unknown>): KeyedField[] => {
    if (isObjectType(place.type)) return (place.fixed ??= collectFields(schema, fragments, included, place.sets, place.type, place.type));
    const runtime = typeNamed(schema, object['__typename']);
    const byRuntime = (place.byRuntime ??= new Map());
    let fields = byRuntime.get(runtime?.name ?? '');
    if (!fields) byRuntime.set(runtime?.name ?? '', (fields = collectFields(schema, fragments, included, place.sets, place.type, runtime)));
    return fields;
  };
  const count = (value: unknown, place: Place): number => {
    if (value === null || typeof value !== 'object') return 0;
    let total = 0;
    if (Array.isArray(value)) {
      for (const item of value) total += count(item, place);
      return total;
    }
    const object = value as Record<string, unknown>;
    for (const field of fieldsOf(place, object)) {
      if (!Object.hasOwn(object, field.key)) continue;
      total += 1;
      if (field.type) total += count(object[field.key], (field.place ??= { sets: field.below, type: field.type }));
    }
    return total;
  };
  return count(data, root);
}

/** The root place of an operation for the request's `@skip`/`@include` outcomes: remembered, or new. */
function placesOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | null | undefined,
  rootType: GraphQLObjectType,
): { fragments: Map<string, FragmentDefinitionNode>; root: Place } {
  let known = plans.get(document);
  if (!known || known.schema !== schema) plans.set(document, (known = { schema, fragments: fragmentsOf(document), operations: new Map() }));
  const fresh: Place = { sets: [operation.selectionSet], type: rootType };
  // An operation of another document is not remembered: its places serve this answer only.
  if (!document.definitions.includes(operation)) return { fragments: known.fragments, root: fresh };
  let forOperation = known.operations.get(operation);
  if (!forOperation) known.operations.set(operation, (forOperation = { conditions: conditionVariables(document), byValues: new Map() }));
  const { conditions } = forOperation;
  const outcome =
    conditions.length === 0 ? '' : conditions.map((name) => (variableValue(operation, variables, name) === true ? '1' : '0')).join('');
  const root = forOperation.byValues.get(outcome);
  if (root) return { fragments: known.fragments, root };
  if (forOperation.byValues.size < MAX_REMEMBERED_OUTCOMES) forOperation.byValues.set(outcome, fresh);
  return { fragments: known.fragments, root: fresh };
}

/** The variables the document's `@skip`/`@include` conditions read. */
function conditionVariables(document: DocumentNode): string[] {
  const names = new Set<string>();
  visit(document, {
    Directive(directive) {
      if (directive.name.value !== 'skip' && directive.name.value !== 'include') return;
      const condition = directive.arguments?.find((argument) => argument.name.value === 'if')?.value;
      if (condition?.kind === Kind.VARIABLE) names.add(condition.name.value);
    },
  });
  return [...names];
}

/** Whether `@skip`/`@include` let a selection run, with the request's variables (else the operation's defaults). */
function isIncluded(
  selection: SelectionNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | null | undefined,
): boolean {
  for (const directive of selection.directives ?? []) {
    const name = directive.name.value;
    if (name !== 'skip' && name !== 'include') continue;
    const condition = directive.arguments?.find((argument) => argument.name.value === 'if')?.value;
    let value: unknown;
    if (condition?.kind === Kind.BOOLEAN) value = condition.value;
    else if (condition?.kind === Kind.VARIABLE) value = variableValue(operation, variables, condition.name.value);
    if (name === 'skip' && value === true) return false;
    if (name === 'include' && value !== true) return false;
  }
  return true;
}

/** The object type a `__typename` names, or null (absent, or no object type of the schema). */
function typeNamed(schema: GraphQLSchema, typename: unknown): GraphQLObjectType | null {
  const type = typeof typename === 'string' ? schema.getType(typename) : undefined;
  return type && isObjectType(type) ? type : null;
}

/**
 * The fields selected by `sets` on an object of `runtime` type (null: unknown, every fragment applies), merged by
 * response key as execution merges them; introspection and fields the schema does not know are left out. A named
 * fragment is expanded once per collection, as in execution.
 */
function collectFields(
  schema: GraphQLSchema,
  fragments: Map<string, FragmentDefinitionNode>,
  included: (selection: SelectionNode) => boolean,
  sets: readonly SelectionSetNode[],
  parent: GraphQLCompositeType,
  runtime: GraphQLObjectType | null,
): KeyedField[] {
  const byKey = new Map<string, KeyedField>();
  const expanded = new Set<string>();
  const applies = (condition: string | undefined, fallback: GraphQLCompositeType): GraphQLCompositeType | undefined => {
    const type = condition === undefined ? fallback : schema.getType(condition);
    if (!type || !isCompositeType(type)) return undefined;
    if (runtime === null || type === runtime) return type;
    return isAbstractType(type) && schema.isSubType(type, runtime) ? type : undefined;
  };
  const visit = (set: SelectionSetNode, on: GraphQLCompositeType): void => {
    for (const selection of set.selections) {
      if (!included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const field = isLeftOutOfCost(runtime ?? on, name) ? undefined : fieldOn(runtime ?? on, name);
        if (!field) continue;
        const key = selection.alias?.value ?? name;
        let keyed = byKey.get(key);
        if (!keyed) {
          const type = getNamedType(field.type);
          byKey.set(key, (keyed = { key, below: [], type: isCompositeType(type) ? type : null }));
        }
        if (selection.selectionSet) keyed.below.push(selection.selectionSet);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = applies(selection.typeCondition?.name.value, on);
        if (type) visit(selection.selectionSet, type);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || expanded.has(name)) continue;
        expanded.add(name);
        const type = applies(fragment.typeCondition.name.value, on);
        if (type) visit(fragment.selectionSet, type);
      }
    }
  };
  for (const set of sets) visit(set, parent);
  return [...byKey.values()];
}
