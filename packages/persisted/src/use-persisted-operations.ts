import { requestMemo } from '@latchkey/http';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { createPersistedRequestResolver, type PersistedMode, type RegistrationDecision } from './resolve-request.js';
import { persistedOperationOf } from './running-operation.js';
import type { PersistedOperationStore } from './store/types.js';
import { usePersistedLookup } from './use-persisted-lookup.js';

export interface PersistedOperationsOptions<TServerContext> {
  /** which requests are accepted (see PersistedMode). @default 'apq' */
  mode?: PersistedMode;
  /** where operations are found and registered */
  store: PersistedOperationStore;
  /**
   * Asked before each new APQ registration (not for known hashes, nor for plain query text): a refusal answers
   * 429 RATE_LIMITED with `Retry-After`, so one client cannot grow the store or flush it.
   * @default always allowed
   */
  allowRegistration?: (request: Request, serverContext: TServerContext) => Promise<RegistrationDecision>;
  /** a registration that could not be written (the request still executes; the next one registers again) */
  onRegistrationError?: (error: unknown) => void;
}

const ALLOWED: RegistrationDecision = Object.freeze({ allowed: true });

/**
 * Persisted operations for Yoga: automatic persisted queries or trusted documents (spec "Persisted-query
 * extension", docs/graphql.md "Persisted operations"). A known operation skips parsing, and validation against the schema it
 * already passed; nothing else is skipped: the GET-mutation guard (an after-parse hook), the per-request cost
 * limit and every check that depends on the caller run at execution as for query text. Registration happens
 * only for a document that parsed and validated (it is written before the operation executes).
 *
 * The ids are read from `extensions.persistedQuery` and from the draft spec's `documentId` parameter (POST
 * body or GET query string); place this plugin before any plugin that checks the request parameters.
 *
 * Looking an id up, and refusing text in `allowlist` mode, is @graphql-yoga/plugin-persisted-operations'
 * (usePersistedLookup); the checks before it (mode `off`, version, malformed ids, hash mismatch), registration
 * after validation and the parse and validation memo are this package's own: that plugin only looks up.
 */
export function usePersistedOperations<TServerContext extends Record<string, unknown>>(
  options: PersistedOperationsOptions<TServerContext>,
): Plugin<Record<string, unknown>, TServerContext> {
  const resolver = createPersistedRequestResolver(options.mode ?? 'apq', options.store);
  // Mode `off` never looks an id up (classify refuses every persisted reference first).
  const lookup = usePersistedLookup<TServerContext>({ mode: resolver.mode === 'allowlist' ? 'allowlist' : 'apq', store: options.store });
  const allowRegistration = options.allowRegistration;
  const onRegistrationError = options.onRegistrationError ?? (() => {});
  /** Requests whose query text registers once it has validated. */
  const pending = requestMemo<{ hash: string; query: string } | undefined>('registration awaiting validation');
  const paramsOf = (context: unknown) => (context as { params?: GraphQLParams } | undefined)?.params;

  const onParams: NonNullable<Plugin<Record<string, unknown>, TServerContext>['onParams']> = (payload) => {
    const { params, request, context } = payload;
    // Not an object (a batch entry of `null`, say): the parameter checks refuse it.
    if (typeof params !== 'object' || params === null || Array.isArray(params)) return;
    const given = params as GraphQLParams & { documentId?: unknown };
    // Request parsers that know only the four standard parameters drop a GET's `documentId`.
    if (request.method === 'GET' && given.query == null && given.documentId === undefined) {
      const documentId = new URL(request.url).searchParams.get('documentId');
      if (documentId !== null) given.documentId = documentId;
    }
    // The common case, plain text naming no persisted operation, stays synchronous (no promise per request).
    const extensions = given.extensions as Record<string, unknown> | null | undefined;
    if (
      given.documentId === undefined &&
      (extensions == null || extensions['persistedQuery'] == null) &&
      (resolver.mode !== 'allowlist' || given.query == null)
    )
      return;
    const persisted = resolver.classify(given);
    switch (persisted.kind) {
      case 'text':
        return;
      case 'text-with-hash':
        return resolver
          .admit(persisted, () => (allowRegistration ? allowRegistration(request, context) : Promise.resolve(ALLOWED)))
          .then((resolution) => {
            if (resolution.kind === 'register') pending.set(params, resolution);
          });
      // An id to look up, or text in `allowlist` mode: @graphql-yoga/plugin-persisted-operations answers.
      case 'id':
      case 'text-refused':
        return lookup.onParams!(payload);
    }
  };

  return {
    onParams,
    onParse({ context, setParsedDocument }) {
      const operation = persistedOperationOf(paramsOf(context));
      if (!operation) return;
      if (operation.document) {
        setParsedDocument(operation.document);
        return;
      }
      return ({ result }) => {
        if (result && !(result instanceof Error)) operation.document = result;
      };
    },
    onValidate({ context, params, setResult }) {
      const operation = persistedOperationOf(paramsOf(context));
      if (!operation) return;
      if (operation.validatedFor === params.schema && operation.document === params.documentAST) {
        setResult([]);
        return;
      }
      return ({ valid }) => {
        if (valid && operation.document === params.documentAST) operation.validatedFor = params.schema;
      };
    },
    async onExecute({ args }) {
      const params = paramsOf(args.contextValue);
      if (!params) return;
      const registration = pending.get(params);
      if (!registration) return;
      pending.set(params, undefined);
      await resolver.register(registration).catch(onRegistrationError);
    },
  };
}
