import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  Kind,
  type DefinitionNode,
  type DocumentNode,
  type FieldNode,
  type GraphQLField,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { fieldOn, fragmentsOf, isLeftOutOfCost, variableValue } from '../cost-model.js';
import { queryTooComplex } from '../errors.js';

export interface CostLimitOptions {
  /** the highest estimated cost an operation may have. @default 5000 */
  maxCost: number;
  /** items assumed for a list field without `first`/`last`. @default 10 */
  defaultListSize: number;
  /**
   * The largest page a `first`/`last` can ask for (the resolvers refuse more, with BAD_USER_INPUT naming the
   * argument): a larger figure is costed as this, so that the clearer refusal is the one the client gets.
   * @default 100
   */
  maxPageSize?: number;
}

interface Estimate {
  cost: number;
  /**
   * The variables whose values sized a list, each as the page size it gave (null: none, the list's default): the
   * figure holds for every request whose variables give the same sizes. Empty when no variable sized a list.
   */
  sizedBy: Map<string, number | null>;
}

const PAGE_ARGUMENTS = new Set(['first', 'last']);
/** The lists of a Relay connection that hold one page. */
const CONNECTION_LISTS = new Set(['edges', 'nodes']);

/**
 * Cost = number of fields that may resolve, each field counted once per item of every enclosing list.
 * A list's size is its `first`/`last` argument (literal or variable, else the argument's schema default),
 * else `defaultListSize`. A paged connection (a non-list field with `first`/`last`) sizes its `edges` and
 * `nodes` lists by its page size.
 * Introspection is left out here: it is gated by its own setting and bounded by the depth limit; so is the
 * caller's budget (`Query.rateLimit`), which asking never spends.
 */
export function estimateCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | null | undefined,
  defaultListSize: number,
  maxPageSize = 100,
): Estimate {
  const fragments = fragmentsOf(document);
  const sizedBy = new Map<string, number | null>();

  /** A `first`/`last` value as the estimate counts it (0 to maxPageSize), or undefined for none. */
  const pageSize = (value: ValueNode): number | undefined => {
    if (value.kind === Kind.INT) return clampedPageSize(Number(value.value), maxPageSize) ?? undefined;
    if (value.kind !== Kind.VARIABLE) return undefined;
    const size = clampedPageSize(variablePageSize(operation, variables, value.name.value), maxPageSize);
    sizedBy.set(value.name.value, size);
    return size ?? undefined;
  };

  /** The page size a field asks for: its `first`/`last` (literal or variable), else the argument's default. */
  const requestedPage = (selection: FieldNode, field: GraphQLField<unknown, unknown>): number | undefined => {
    let size: number | undefined;
    for (const argument of selection.arguments ?? []) {
      if (!PAGE_ARGUMENTS.has(argument.name.value)) continue;
      const given = pageSize(argument.value);
      if (given !== undefined) size = given;
    }
    if (size !== undefined) return size;
    for (const argument of field.args) {
      if (PAGE_ARGUMENTS.has(argument.name) && typeof argument.defaultValue === 'number') return Math.max(0, argument.defaultValue);
    }
    return undefined;
  };

  /**
   * `page`: the size of the paged connection whose selection this is (a non-list field with `first`/`last`,
   * Relay style): its `edges`/`nodes` lists hold that many items, not the default list size.
   */
  const walk = (
    selectionSet: SelectionSetNode,
    parent: GraphQLCompositeType,
    multiplier: number,
    seen: Set<string>,
    page?: number,
  ): number => {
    let total = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (isLeftOutOfCost(parent, name)) continue;
        const field = fieldOn(parent, name);
        if (!field) continue;
        total += multiplier;
        if (!selection.selectionSet) continue;
        const requested = requestedPage(selection, field);
        let factor = 1;
        let childPage: number | undefined;
        if (isListType(getNullableType(field.type))) {
          factor = requested ?? (page !== undefined && CONNECTION_LISTS.has(name) ? page : defaultListSize);
        } else if (field.args.some((argument) => PAGE_ARGUMENTS.has(argument.name))) {
          childPage = requested ?? defaultListSize;
        }
        const child = getNamedType(field.type);
        if (isCompositeType(child)) total += walk(selection.selectionSet, child, multiplier * factor, seen, childPage);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (condition && isCompositeType(condition)) total += walk(selection.selectionSet, condition, multiplier, seen, page);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || seen.has(name)) continue;
        const condition = schema.getType(fragment.typeCondition.name.value);
        if (!condition || !isCompositeType(condition)) continue;
        seen.add(name);
        total += walk(fragment.selectionSet, condition, multiplier, seen, page);
        seen.delete(name);
      }
    }
    return total;
  };

  const root = schema.getRootType(operation.operation);
  const cost = root ? walk(operation.selectionSet, root, 1, new Set()) : 0;
  return { cost, sizedBy };
}

/**
 * The page size a variable gives, as execution will coerce it: the request's value when the request names the
 * variable (null: no size), else the operation's default for it. Not an Int (2^31 or more, say): no size here, and
 * the variable's coercion refuses it with BAD_USER_INPUT.
 */
function variablePageSize(
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | null | undefined,
  name: string,
): number | undefined {
  const given = variableValue(operation, variables, name);
  return Number.isSafeInteger(given) && Math.abs(given as number) < 2 ** 31 ? (given as number) : undefined;
}

/** A page size as the estimate counts it (0 to maxPageSize), or null for none. */
const clampedPageSize = (size: number | undefined, maxPageSize: number): number | null =>
  size === undefined ? null : Math.max(0, Math.min(size, maxPageSize));

/** Estimates kept per operation of a parsed document: by the page sizes its variables give. */
interface KnownCosts {
  /** the variables that size a list in this operation (the same whatever their values) */
  variables: string[];
  bySizes: Map<string, number>;
}

/** Distinct page sizes remembered per operation (each first/last variable gives at most maxPageSize + 2). */
const MAX_REMEMBERED_SIZES = 64;

/** An operation's estimated cost with a request's variables (undefined: no such operation in the document). */
export type CostEstimator = (
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
) => number | undefined;

/**
 * The estimate of `estimateCost`, remembered per parsed document and operation, keyed by the page sizes its
 * variables give (a dashboard sends the same `$first` every time), so a repeated operation costs a lookup instead of
 * a walk. One estimator serves MAX_COST and the budgets (graphql-transports.ts), which ask for the same operation one
 * after the other: the last figure is kept for exactly those arguments, so the second asks nothing of the cache.
 */
export function createCostEstimator(options: Pick<CostLimitOptions, 'defaultListSize' | 'maxPageSize'>): CostEstimator {
  const estimate = rememberedEstimates(options);
  let last:
    | { schema: GraphQLSchema; document: DocumentNode; operationName: unknown; variables: unknown; cost: number | undefined }
    | undefined;
  return (schema, document, operationName, variables) => {
    if (
      last &&
      last.document === document &&
      last.variables === variables &&
      last.operationName === operationName &&
      last.schema === schema
    )
      return last.cost;
    const cost = estimate(schema, document, operationName, variables);
    last = { schema, document, operationName, variables, cost };
    return cost;
  };
}

/** The figures remembered per document and operation, by page sizes. */
function rememberedEstimates(options: Pick<CostLimitOptions, 'defaultListSize' | 'maxPageSize'>): CostEstimator {
  const maxPageSize = options.maxPageSize ?? 100;
  const known = new WeakMap<DocumentNode, Map<string, KnownCosts>>();
  return (schema, document, operationName, variables) => {
    const operation = document.definitions.find(
      (d: DefinitionNode): d is OperationDefinitionNode =>
        d.kind === Kind.OPERATION_DEFINITION && (operationName == null || d.name?.value === operationName),
    );
    if (!operation) return undefined;
    let byOperation = known.get(document);
    const entry = byOperation?.get(operationName ?? '');
    const sizesKey = (names: string[]) =>
      names.map((name) => clampedPageSize(variablePageSize(operation, variables, name), maxPageSize) ?? '-').join(',');
    if (entry) {
      const cost = entry.bySizes.get(sizesKey(entry.variables));
      if (cost !== undefined) return cost;
    }
    const { cost, sizedBy } = estimateCost(schema, document, operation, variables, options.defaultListSize, maxPageSize);
    const remembered = entry ?? { variables: [...sizedBy.keys()], bySizes: new Map<string, number>() };
    if (remembered.bySizes.size < MAX_REMEMBERED_SIZES) remembered.bySizes.set(sizesKey(remembered.variables), cost);
    if (!entry) {
      if (!byOperation) known.set(document, (byOperation = new Map()));
      byOperation.set(operationName ?? '', remembered);
    }
    return cost;
  };
}

/**
 * Runs per request, after validation, with the request's variables: a cached validation result cannot skip it.
 * `costOf`: the estimator the budgets share (one cache for both), else one of its own.
 */
export function useCostLimit(options: CostLimitOptions, costOf: CostEstimator = createCostEstimator(options)): Plugin {
  const check = ({
    args,
    setResultAndStopExecution,
  }: Pick<Parameters<NonNullable<Plugin['onExecute']>>[0], 'args' | 'setResultAndStopExecution'>): void => {
    const cost = costOf(args.schema, args.document, args.operationName, args.variableValues);
    if (cost !== undefined && cost > options.maxCost) {
      setResultAndStopExecution({
        errors: [queryTooComplex(`Query cost ${cost} exceeds the limit of ${options.maxCost}.`)],
      });
    }
  };
  // A subscription's selection is resolved once per event: its cost is judged when it starts.
  return { onExecute: check, onSubscribe: check };
}
