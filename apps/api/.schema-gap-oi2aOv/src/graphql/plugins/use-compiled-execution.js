import { BREAK, getOperationAST, Kind, locatedError, visit, } from 'graphql';
import { getVariableValues } from 'graphql/execution/values.js';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
/**
 * A document is compiled on its second execution: compiling costs several validations (about 14 ms for the 3 KB
 * dashboard against 3-5 ms to validate it), which a client sending a new document every time must not be able to
 * make the server spend; documents used again, the ones that matter, are compiled once.
 */
const COMPILE_ON_USE = 2;
const entries = new WeakMap();
let compiledCount = 0;
/** How many documents this process has compiled (for tests and the curious). */
export const compiledDocuments = () => compiledCount;
function usesIncrementalDelivery(document) {
    let found = false;
    visit(document, {
        Directive(node) {
            if (node.name.value !== 'defer' && node.name.value !== 'stream')
                return;
            found = true;
            return BREAK;
        },
    });
    return found;
}
function compiledFor(args) {
    let bySchema = entries.get(args.schema);
    if (!bySchema)
        entries.set(args.schema, (bySchema = new WeakMap()));
    let byName = bySchema.get(args.document);
    if (!byName)
        bySchema.set(args.document, (byName = new Map()));
    const key = args.operationName ?? '';
    let entry = byName.get(key);
    if (!entry)
        byName.set(key, (entry = { uses: 0 }));
    if (entry.compiled !== undefined)
        return entry.compiled;
    if (++entry.uses < COMPILE_ON_USE)
        return null;
    entry.compiled = null;
    const operation = getOperationAST(args.document, args.operationName);
    // Subscriptions and incremental delivery stay with Yoga's executor, which streams.
    if (operation && operation.operation !== 'subscription' && !usesIncrementalDelivery(args.document)) {
        const result = compileQuery(args.schema, args.document, args.operationName ?? undefined);
        if (isCompiledQuery(result)) {
            const fragments = new Map();
            for (const definition of args.document.definitions)
                if (definition.kind === Kind.FRAGMENT_DEFINITION)
                    fragments.set(definition.name.value, definition);
            entry.compiled = { query: result.query, operation, fragments };
            compiledCount++;
        }
    }
    return entry.compiled;
}
/** The field nodes answering `key` in a selection set, through fragments (what graphql-js locates an error with). */
function fieldNodesOf(selectionSet, key, fragments, out = []) {
    for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) {
            if ((selection.alias ?? selection.name).value === key)
                out.push(selection);
        }
        else if (selection.kind === Kind.INLINE_FRAGMENT)
            fieldNodesOf(selection.selectionSet, key, fragments, out);
        else {
            const fragment = fragments.get(selection.name.value);
            if (fragment)
                fieldNodesOf(fragment.selectionSet, key, fragments, out);
        }
    }
    return out;
}
function nodesAt(compiled, path) {
    let nodes = [];
    let sets = [compiled.operation.selectionSet];
    for (const key of path) {
        if (typeof key === 'number')
            continue;
        nodes = sets.flatMap((set) => fieldNodesOf(set, key, compiled.fragments));
        sets = nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
    }
    return nodes;
}
/** graphql-jit's error as graphql-js would have made it: `locatedError` of the raw error at the field's nodes. */
function asGraphQLJsError(compiled, error) {
    const path = error.path ?? [];
    // Errors graphql-jit raises itself (a null for a Non-Null field, a list that is not iterable) are plain Errors in
    // graphql-js too, so they are masked like any unexpected failure.
    return locatedError(error.originalError ?? new Error(error.message), nodesAt(compiled, path), path);
}
/**
 * Cached documents executed by graphql-jit (compiled to JavaScript once, then run without graphql-js's per-field
 * interpretation), with every answer kept as graphql-js gives it:
 * - variables are coerced and refused by graphql-js first, so their errors read the same;
 * - every error is rebuilt with graphql-js's `locatedError` at the field's nodes (locations, `originalError`), so
 *   masking and error codes treat it alike; graphql-jit's own errors (a null for a Non-Null field) are plain
 *   Errors there too, and masked;
 * - field rules run as before: they wrap the schema's resolvers, which the compiled code calls;
 * - an answer without `data` (graphql-jit refused to start) is answered again by the executor it replaced.
 * Subscriptions and documents with `@defer`/`@stream` keep Yoga's executor.
 */
export function useCompiledExecution() {
    return {
        onExecute({ args, executeFn, setExecuteFn }) {
            const compiled = compiledFor(args);
            if (!compiled)
                return;
            setExecuteFn(async (executionArgs) => {
                const coerced = getVariableValues(executionArgs.schema, compiled.operation.variableDefinitions ?? [], executionArgs.variableValues ?? {}, {
                    maxErrors: 50,
                });
                if (coerced.errors)
                    return { errors: coerced.errors };
                const result = (await compiled.query(executionArgs.rootValue, executionArgs.contextValue, executionArgs.variableValues));
                if (!('data' in result))
                    return executeFn(executionArgs);
                if (!result.errors)
                    return result;
                // graphql-js's key order (errors first): answers are compared byte for byte (a missing record and a hidden one).
                const { errors, data, ...rest } = result;
                return { errors: errors.map((error) => asGraphQLJsError(compiled, error)), data, ...rest };
            });
        },
    };
}
//# sourceMappingURL=use-compiled-execution.js.map