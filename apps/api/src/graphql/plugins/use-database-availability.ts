import type { DatabaseHandle, DatabaseHealth } from '@latchkey/db';
import {
  getNamedType,
  getOperationAST,
  isObjectType,
  isInterfaceType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { serviceUnavailable } from '../errors.js';

export interface DatabaseAvailabilityOptions {
  health: DatabaseHealth;
  /** starts an operation's deadline (DATABASE_TIMEOUT), at the start of its execution */
  deadlineFromNow: DatabaseHandle['deadlineFromNow'];
  /** the fields (`Type.field`) answered without the database; every other field needs it */
  databaseFree: ReadonlySet<string>;
}

/**
 * Operations and the database. An operation that selects a field needing the database runs
 * under one deadline (DATABASE_TIMEOUT) for all of its statements; while an outage is known it is refused before
 * execution with one SERVICE_UNAVAILABLE error and no `data` (503 + Retry-After, or 200 under
 * application/json). Operations that need no database (a guest's `{ status }`) keep answering and pay nothing.
 */
export function useDatabaseAvailability(options: DatabaseAvailabilityOptions): Plugin<{ deadline?: number }> {
  const { health, deadlineFromNow } = options;
  const needsDatabase = createDatabaseNeeds(options.databaseFree);
  return {
    onExecute({ args, setResultAndStopExecution }) {
      if (!needsDatabase(args.schema, args.document, args.operationName)) return;
      if (!health.available) return setResultAndStopExecution({ errors: [serviceUnavailable()] });
      // Read by the request's view of the database (graphql/context.ts dbOf): its statements' deadline.
      args.contextValue.deadline = deadlineFromNow();
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      // Subscriptions always read the database (the caller's rights, at start and at every event).
      if (!health.available) return setResultAndStopExecution({ errors: [serviceUnavailable()] });
      // The deadline covers the checks at start; each event is judged under a deadline of its own.
      args.contextValue.deadline = deadlineFromNow();
    },
  };
}

/**
 * Whether an operation selects a field that needs the database, judged once per document and operation name.
 * Mutations always do; `__typename` and introspection never do.
 */
export function createDatabaseNeeds(databaseFree: ReadonlySet<string>) {
  const cache = new WeakMap<DocumentNode, Map<string, boolean>>();
  return function needsDatabase(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): boolean {
    let byOperation = cache.get(document);
    if (!byOperation) cache.set(document, (byOperation = new Map()));
    const key = operationName ?? '';
    let needs = byOperation.get(key);
    if (needs === undefined) byOperation.set(key, (needs = judge(schema, document, operationName, databaseFree)));
    return needs;
  };
}

function judge(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  databaseFree: ReadonlySet<string>,
): boolean {
  const operation = getOperationAST(document, operationName);
  if (!operation) return false; // nothing will execute
  if (operation.operation !== 'query') return true;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const seen = new Set<string>();

  function selects(selectionSet: SelectionSetNode, parent: GraphQLNamedType | undefined): boolean {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (name.startsWith('__')) continue;
        if (!parent || !databaseFree.has(`${parent.name}.${name}`)) return true;
        const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
        if (selection.selectionSet && selects(selection.selectionSet, field ? getNamedType(field.type) : undefined)) return true;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (selects(selection.selectionSet, type ?? undefined)) return true;
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || seen.has(name)) continue;
        seen.add(name);
        if (selects(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? undefined)) return true;
      }
    }
    return false;
  }
  return selects(operation.selectionSet, schema.getQueryType() ?? undefined);
}
