import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
/**
 * @defer and @stream (the incremental-delivery working draft) through Yoga's plugin, whose validation rules are
 * added only for documents that use the directives: it swaps a standard rule for its own and adds four more on
 * every validation, which costs the hot path of every other request (the rule set is part of the validation
 * cache's key) for nothing. Documents without `@defer`/`@stream` are validated by the standard rules, which are
 * the right ones for them.
 */
export function useIncrementalDelivery() {
    const deferStream = useDeferStream();
    return {
        onSchemaChange: deferStream.onSchemaChange,
        onValidate(payload) {
            const query = payload.context.params?.query;
            if (typeof query === 'string' && !query.includes('@defer') && !query.includes('@stream'))
                return;
            return deferStream.onValidate(payload);
        },
    };
}
//# sourceMappingURL=use-incremental-delivery.js.map