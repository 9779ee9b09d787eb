import { getNamedType, getNullableType, isCompositeType, isListType, isObjectType, isInterfaceType, Kind, } from 'graphql';
import { queryTooComplex } from '../errors.js';
const PAGE_ARGUMENTS = new Set(['first', 'last']);
/** The lists of a Relay connection that hold one page. */
const CONNECTION_LISTS = new Set(['edges', 'nodes']);
/**
 * Cost = number of fields that may resolve, each field counted once per item of every enclosing list.
 * A list's size is its `first`/`last` argument (literal or variable, else the argument's schema default),
 * else `defaultListSize`. A paged connection (a non-list field with `first`/`last`) sizes its `edges` and
 * `nodes` lists by its page size.
 * Introspection is left out here: it is gated by its own setting and bounded by the depth limit.
 */
export function estimateCost(schema, document, operation, variables, defaultListSize, maxPageSize = 100) {
    const fragments = new Map();
    for (const definition of document.definitions) {
        if (definition.kind === Kind.FRAGMENT_DEFINITION)
            fragments.set(definition.name.value, definition);
    }
    let reusable = true;
    const pageSize = (value) => {
        let size;
        if (value.kind === Kind.INT)
            size = Number(value.value);
        if (value.kind === Kind.VARIABLE) {
            reusable = false;
            const given = variables?.[value.name.value];
            // Not an Int (2^31 or more, say): the variable's coercion refuses it with BAD_USER_INPUT.
            if (Number.isSafeInteger(given) && Math.abs(given) < 2 ** 31)
                size = given;
        }
        return size === undefined ? undefined : Math.min(size, maxPageSize);
    };
    /** The page size a field asks for: its `first`/`last` (literal or variable), else the argument's default. */
    const requestedPage = (selection, field) => {
        let size;
        for (const argument of selection.arguments ?? []) {
            if (!PAGE_ARGUMENTS.has(argument.name.value))
                continue;
            const given = pageSize(argument.value);
            if (given !== undefined)
                size = Math.max(0, given);
        }
        if (size !== undefined)
            return size;
        for (const argument of field.args) {
            if (PAGE_ARGUMENTS.has(argument.name) && typeof argument.defaultValue === 'number')
                return Math.max(0, argument.defaultValue);
        }
        return undefined;
    };
    /**
     * `page`: the size of the paged connection whose selection this is (a non-list field with `first`/`last`,
     * Relay style): its `edges`/`nodes` lists hold that many items, not the default list size.
     */
    const walk = (selectionSet, parent, multiplier, seen, page) => {
        let total = 0;
        for (const selection of selectionSet.selections) {
            if (selection.kind === Kind.FIELD) {
                const name = selection.name.value;
                if (name.startsWith('__'))
                    continue;
                const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
                if (!field)
                    continue;
                total += multiplier;
                if (!selection.selectionSet)
                    continue;
                const requested = requestedPage(selection, field);
                let factor = 1;
                let childPage;
                if (isListType(getNullableType(field.type))) {
                    factor = requested ?? (page !== undefined && CONNECTION_LISTS.has(name) ? page : defaultListSize);
                }
                else if (field.args.some((argument) => PAGE_ARGUMENTS.has(argument.name))) {
                    childPage = requested ?? defaultListSize;
                }
                const child = getNamedType(field.type);
                if (isCompositeType(child))
                    total += walk(selection.selectionSet, child, multiplier * factor, seen, childPage);
            }
            else if (selection.kind === Kind.INLINE_FRAGMENT) {
                const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
                if (condition && isCompositeType(condition))
                    total += walk(selection.selectionSet, condition, multiplier, seen, page);
            }
            else {
                const name = selection.name.value;
                const fragment = fragments.get(name);
                if (!fragment || seen.has(name))
                    continue;
                const condition = schema.getType(fragment.typeCondition.name.value);
                if (!condition || !isCompositeType(condition))
                    continue;
                seen.add(name);
                total += walk(fragment.selectionSet, condition, multiplier, seen, page);
                seen.delete(name);
            }
        }
        return total;
    };
    const root = schema.getRootType(operation.operation);
    const cost = root ? walk(operation.selectionSet, root, 1, new Set()) : 0;
    return { cost, reusable };
}
/**
 * Runs per request, after validation, with the request's variables: a cached validation result
 * cannot skip it. Costs that do not depend on variables are remembered per parsed document.
 */
export function useCostLimit(options) {
    const staticCosts = new WeakMap();
    const check = ({ args, setResultAndStopExecution, }) => {
        const { schema, document, operationName, variableValues } = args;
        const key = operationName ?? '';
        let cost = staticCosts.get(document)?.get(key);
        if (cost === undefined) {
            const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION && (operationName == null || d.name?.value === operationName));
            if (!operation)
                return;
            const estimate = estimateCost(schema, document, operation, variableValues, options.defaultListSize, options.maxPageSize);
            cost = estimate.cost;
            if (estimate.reusable) {
                let byOperation = staticCosts.get(document);
                if (!byOperation)
                    staticCosts.set(document, (byOperation = new Map()));
                byOperation.set(key, cost);
            }
        }
        if (cost > options.maxCost) {
            setResultAndStopExecution({
                errors: [queryTooComplex(`Query cost ${cost} exceeds the limit of ${options.maxCost}.`)],
            });
        }
    };
    // A subscription's selection is resolved once per event: its cost is judged when it starts.
    return { onExecute: check, onSubscribe: check };
}
//# sourceMappingURL=use-cost-limit.js.map