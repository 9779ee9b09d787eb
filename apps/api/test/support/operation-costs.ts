import {
  executeSync,
  getNamedType,
  getNullableType,
  isCompositeType,
  isEnumType,
  isListType,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLFieldResolver,
  type GraphQLOutputType,
  type GraphQLSchema,
  type GraphQLTypeResolver,
  type OperationDefinitionNode,
} from 'graphql';
import { actualCost } from '../../src/graphql/actual-cost.js';
import { estimateCost } from '../../src/graphql/plugins/use-cost-limit.js';

/** An operation's requested cost (the estimate admission judges) beside the cost it actually had. */
export interface OperationCosts {
  estimated: number;
  actual: number;
  data: unknown;
}

interface CostOptions {
  variables?: Record<string, unknown>;
  /** @default 10 */
  defaultListSize?: number;
  /** @default 100 */
  maxPageSize?: number;
}

/**
 * Runs `source` (validated first) over `root` with graphql's default resolvers, so the response holds exactly what
 * `root` has, and gives both costs of it.
 */
export function costsOver(schema: GraphQLSchema, source: string, root: unknown, options: CostOptions = {}): OperationCosts {
  const document = validated(schema, source);
  return costsOf(schema, document, executed({ schema, document, rootValue: root, variableValues: options.variables }), options);
}

/** Marks an object a paged connection resolved to, with its page size: its `edges` and `nodes` hold that many. */
const PAGE = Symbol('page');

/**
 * Runs `source` with every list full, as the estimate sizes it: a list holds its `first`/`last` (as coerced, the
 * argument's default included, at most maxPageSize), else its paged connection's page size for `edges`/`nodes`,
 * else defaultListSize items; a paged connection is a non-list field with `first`/`last`. Every object field
 * resolves to an object, every abstract type to its first possible type. On such a response, for an operation
 * whose fragments all apply, the actual cost must equal the estimate.
 */
export function costsOnFullPages(schema: GraphQLSchema, source: string, options: CostOptions = {}): OperationCosts {
  const defaultListSize = options.defaultListSize ?? 10;
  const maxPageSize = options.maxPageSize ?? 100;
  const document = validated(schema, source);
  const sample = (type: GraphQLOutputType, page?: number): unknown => {
    const named = getNamedType(type);
    if (isCompositeType(named)) return { [PAGE]: page };
    if (isEnumType(named)) return named.getValues()[0]?.value;
    return named.name === 'Int' || named.name === 'Float' ? 1 : named.name === 'Boolean' ? true : 'x';
  };
  const fieldResolver: GraphQLFieldResolver<Record<PropertyKey, unknown>, unknown, Record<string, unknown>> = (
    parent,
    args,
    _context,
    info,
  ) => {
    const given = args['first'] ?? args['last'];
    const requested = typeof given === 'number' ? Math.max(0, Math.min(given, maxPageSize)) : undefined;
    const type = getNullableType(info.returnType);
    if (isListType(type)) {
      const page = parent[PAGE];
      const connectionList = info.fieldName === 'edges' || info.fieldName === 'nodes';
      const size = requested ?? (connectionList && typeof page === 'number' ? page : defaultListSize);
      return Array.from({ length: size }, () => sample(type.ofType));
    }
    const paged = info.parentType.getFields()[info.fieldName]?.args.some((argument) => ['first', 'last'].includes(argument.name));
    return sample(type, paged ? (requested ?? defaultListSize) : undefined);
  };
  const typeResolver: GraphQLTypeResolver<unknown, unknown> = (_value, _context, _info, abstractType) =>
    schema.getPossibleTypes(abstractType)[0]?.name;
  const data = executed({ schema, document, rootValue: {}, variableValues: options.variables, fieldResolver, typeResolver });
  return costsOf(schema, document, data, options);
}

/** The response data of an execution without errors (an error fails the test that ran it). */
function executed(args: ExecutionArgs): unknown {
  const result = executeSync(args);
  if (result.errors?.length) throw new Error(result.errors.map((error) => error.message).join('\n'));
  return result.data;
}

function validated(schema: GraphQLSchema, source: string): DocumentNode {
  const document = parse(source);
  const errors = validate(schema, document);
  if (errors.length) throw new Error(errors.map((error) => error.message).join('\n'));
  return document;
}

function costsOf(schema: GraphQLSchema, document: DocumentNode, data: unknown, options: CostOptions): OperationCosts {
  const operation = document.definitions.find(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
  if (!operation) throw new Error('no operation in the document');
  const { variables, defaultListSize = 10, maxPageSize = 100 } = options;
  return {
    estimated: estimateCost(schema, document, operation, variables, defaultListSize, maxPageSize).cost,
    actual: actualCost(schema, document, operation, variables, data),
    data,
  };
}
