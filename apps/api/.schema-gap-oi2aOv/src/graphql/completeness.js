import { isObjectType } from 'graphql';
/**
 * The same rule at start-up, for a build made without typecheck: every field of every object type of the
 * schema has a resolver in `resolvers` (a subscription field its `subscribe`) or is one the model serves
 * (`modelServed`: the list `pnpm codegen` wrote). Returns the gaps as `Type.field`, empty when there are none.
 */
export function resolverGaps(schema, resolvers, modelServed) {
    const served = new Set(modelServed);
    const gaps = [];
    const subscriptionType = schema.getSubscriptionType()?.name;
    for (const type of Object.values(schema.getTypeMap())) {
        if (!isObjectType(type) || type.name.startsWith('__'))
            continue;
        for (const field of Object.keys(type.getFields())) {
            const implemented = resolvers.some((map) => {
                const entry = map[type.name]?.[field];
                if (type.name === subscriptionType)
                    return typeof entry?.subscribe === 'function';
                return typeof entry === 'function' || typeof entry?.resolve === 'function';
            });
            if (!implemented && !served.has(`${type.name}.${field}`))
                gaps.push(`${type.name}.${field}`);
        }
    }
    return gaps;
}
//# sourceMappingURL=completeness.js.map