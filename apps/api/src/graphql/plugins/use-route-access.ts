import {
  GraphQLError,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ErrorCode, unauthenticated } from '../errors.js';
import type { GraphQLContext } from '../context.js';

export interface RouteAccessOptions {
  /** the SDL directive that marks a field or a type public. @default 'public' */
  publicDirective?: string;
  /**
   * Who may run introspection (`__schema`, `__type`).
   * `open`: anyone; `signed-in`: signed-in callers; `off`: nobody.
   */
  introspection: 'open' | 'signed-in' | 'off';
}

/** What an operation needs before it may run, derived from the document alone (so it is cached per document). */
export interface Requirements {
  signIn: boolean;
  introspection: boolean;
}

function publicMarks(schema: GraphQLSchema, directive: string) {
  const types = new Set<string>();
  const fields = new Set<string>();
  const marked = (node: { directives?: readonly { name: { value: string } }[] } | null | undefined) =>
    node?.directives?.some((d) => d.name.value === directive) ?? false;
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    const nodes = [type.astNode, ...(type.extensionASTNodes ?? [])];
    if (nodes.some(marked)) types.add(type.name);
    if ('getFields' in type) {
      for (const field of Object.values(type.getFields())) {
        if ('astNode' in field && marked(field.astNode)) fields.add(`${type.name}.${field.name}`);
      }
    }
  }
  return { types, fields };
}

/** What an operation needs, judged from the schema's @public marks and the document alone. */
export type RouteRequirementsOf = (schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined) => Requirements;

/**
 * The route-level requirements of operations, cached per document (and operation name): shared by the route
 * check and the public-caching rule, which must agree on what a guest may see.
 */
export function createRouteRequirements(publicDirective = 'public'): RouteRequirementsOf {
  const marksBySchema = new WeakMap<GraphQLSchema, ReturnType<typeof publicMarks>>();
  const requirementsByDocument = new WeakMap<DocumentNode, Map<string, Requirements>>();

  return function requirementsOf(schema, document, operationName) {
    const key = operationName ?? '';
    const cached = requirementsByDocument.get(document)?.get(key);
    if (cached) return cached;
    let marks = marksBySchema.get(schema);
    if (!marks) marksBySchema.set(schema, (marks = publicMarks(schema, publicDirective)));
    const fragments = new Map<string, FragmentDefinitionNode>();
    let operation: OperationDefinitionNode | undefined;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
      else if (definition.kind === Kind.OPERATION_DEFINITION && (operationName == null || definition.name?.value === operationName)) {
        operation ??= definition;
      }
    }
    const requirements: Requirements = { signIn: false, introspection: false };
    if (operation) {
      const typeInfo = new TypeInfo(schema);
      const pending: (OperationDefinitionNode | FragmentDefinitionNode)[] = [operation];
      const visited = new Set<string>();
      const { types, fields } = marks;
      const visitor = visitWithTypeInfo(typeInfo, {
        Field(node) {
          const name = node.name.value;
          if (name === '__typename') return;
          if (name === '__schema' || name === '__type') {
            requirements.introspection = true;
            return false; // the introspection subtree is judged as a whole by its own setting
          }
          const parent = typeInfo.getParentType();
          if (!parent || !(types.has(parent.name) || fields.has(`${parent.name}.${name}`))) requirements.signIn = true;
          return undefined;
        },
        FragmentSpread(node) {
          const name = node.name.value;
          const fragment = fragments.get(name);
          if (fragment && !visited.has(name)) {
            visited.add(name);
            pending.push(fragment);
          }
        },
      });
      while (pending.length > 0) visit(pending.pop()!, visitor);
    }
    let byOperation = requirementsByDocument.get(document);
    if (!byOperation) requirementsByDocument.set(document, (byOperation = new Map()));
    byOperation.set(key, requirements);
    return requirements;
  };
}

/**
 * Route level (spec Authorization 1, 4, 7): before execution, using only the caller and schema metadata.
 * Every field requires a signed-in caller unless it (or its type) is marked @public; `__typename` is
 * always allowed. A guest's operation that selects anything non-public is refused whole, with no `data`.
 */
export function useRouteAccess(
  options: RouteAccessOptions,
  requirementsOf: RouteRequirementsOf = createRouteRequirements(options.publicDirective),
): Plugin<GraphQLContext> {
  const check = ({
    args,
    setResultAndStopExecution,
  }: Pick<Parameters<NonNullable<Plugin<GraphQLContext>['onExecute']>>[0], 'args' | 'setResultAndStopExecution'>): void => {
    const { schema, document, operationName, contextValue } = args;
    const requirements = requirementsOf(schema, document, operationName);
    if (requirements.introspection && options.introspection === 'off') {
      setResultAndStopExecution({
        errors: [
          new GraphQLError('Introspection is disabled on this server.', {
            extensions: { code: ErrorCode.GRAPHQL_VALIDATION_FAILED, http: { status: 400, spec: true } },
          }),
        ],
      });
      return;
    }
    const guest = contextValue.caller === null;
    if (!guest) return;
    if (requirements.signIn || (requirements.introspection && options.introspection !== 'open')) {
      setResultAndStopExecution({ errors: [unauthenticated(contextValue.credentialRejected)] });
    }
  };
  // Subscriptions are judged like queries when they start.
  return { onExecute: check, onSubscribe: check };
}
