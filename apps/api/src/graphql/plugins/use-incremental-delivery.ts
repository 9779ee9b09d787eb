import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { Plugin } from 'graphql-yoga';

/**
 * @defer and @stream (the incremental-delivery working draft) through Yoga's plugin, whose validation rules are
 * added only for documents that use the directives: it swaps a standard rule for its own and adds four more on
 * every validation, which costs the hot path of every other request (the rule set is part of the validation
 * cache's key) for nothing. Documents without `@defer`/`@stream` are validated by the standard rules, which are
 * the right ones for them. The directives are declared in schema/directives.graphql, so the printed schema clients
 * generate against carries them; the plugin's `onSchemaChange` adds them only to a schema without them.
 */
export function useIncrementalDelivery(): Plugin {
  const deferStream = useDeferStream();
  return {
    onSchemaChange: deferStream.onSchemaChange,
    onValidate(payload) {
      const query = (payload.context as { params?: { query?: unknown } }).params?.query;
      if (typeof query === 'string' && !query.includes('@defer') && !query.includes('@stream')) return;
      return deferStream.onValidate!(payload);
    },
  };
}
