import { usePersistedOperations as useYogaPersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { requestMemo } from '@latchkey/http';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { readPersistedReference } from './document-id.js';
import { persistedQueryError } from './errors.js';
import { runsPersistedOperation } from './running-operation.js';
import type { PersistedOperation, PersistedOperationStore } from './store/types.js';

export interface PersistedLookupOptions {
  /**
   * `allowlist`: only operations imported from an allowlist are found, and query text is refused
   * (PERSISTED_QUERY_NOT_ALLOWED); `apq`: any stored operation is found, and query text is let through.
   * @default 'apq'
   */
  mode?: 'apq' | 'allowlist';
  /** where operations are looked up */
  store: PersistedOperationStore;
}

type OnParams<TServerContext extends Record<string, unknown>> = NonNullable<Plugin<Record<string, unknown>, TServerContext>['onParams']>;

const notFound = () => persistedQueryError('PERSISTED_QUERY_NOT_FOUND');
const notAllowed = () => persistedQueryError('PERSISTED_QUERY_NOT_ALLOWED');

/**
 * Looks persisted operations up by id through @graphql-yoga/plugin-persisted-operations: an id alone
 * (`extensions.persistedQuery` or `documentId`, read by readPersistedReference) is replaced by its
 * operation's text, an unknown one is PersistedQueryNotFound, and in `allowlist` mode query text is refused.
 *
 * Only its `onParams` is used, and only for the requests usePersistedOperations hands it (an id without text,
 * or text in `allowlist` mode): the rest of the request rules run before it, and request parameters without
 * a persisted reference never reach it (it would refuse a request without `query` itself, where the parameter
 * checks answer). Its parse and validation hooks are not used: the operation's text is returned, never its
 * DocumentNode (which would make the request's `query` a placeholder for every plugin after it), and
 * usePersistedOperations remembers the parsed document and the schema it validated against instead of skipping
 * validation for every persisted id.
 */
export function usePersistedLookup<TServerContext extends Record<string, unknown>>(
  options: PersistedLookupOptions,
): Plugin<Record<string, unknown>, TServerContext> {
  const allowlistOnly = options.mode === 'allowlist';
  const { store } = options;
  /** The operation found for a request (by its server context, one per request and per entry of a batch). */
  const found = requestMemo<PersistedOperation>('persisted operation found for the request');
  const lookup = useYogaPersistedOperations<TServerContext>({
    allowArbitraryOperations: !allowlistOnly,
    // Query text present but empty (`""`, `0`, `false`) is still text: never an id to look up.
    extractPersistedOperationId: (params) => {
      if (params.query != null) return null;
      const reference = readPersistedReference(params.extensions, (params as { documentId?: unknown }).documentId);
      return typeof reference === 'object' ? reference.hash : null;
    },
    getPersistedOperation: (hash, _request, context) =>
      store.get(hash, { allowlistOnly }).then((operation) => {
        if (!operation) return null;
        found.set(context, operation);
        return operation.query;
      }),
    customErrors: {
      notFound,
      persistedQueryOnly: notAllowed,
      // Reached only by text that is present but empty in `allowlist` mode (extractPersistedOperationId).
      keyNotFound: notAllowed,
    },
  });
  // Typed by the plugin for an empty server context; it hands ours on to getPersistedOperation untouched.
  const onParams = lookup.onParams as unknown as OnParams<TServerContext>;

  return {
    onParams(payload) {
      const { params, context, setParams } = payload;
      return onParams({
        ...payload,
        // The plugin's new parameters keep only the four standard ones: every other parameter the request
        // had (but the id) stays for the parameter checks to judge, as it would beside query text.
        setParams(next) {
          const { documentId: _id, ...rest } = params as GraphQLParams & { documentId?: unknown };
          const replaced: GraphQLParams = { ...rest, query: next.query };
          const operation = found.get(context);
          if (operation) runsPersistedOperation(replaced, operation);
          setParams(replaced);
        },
      });
    },
  };
}
