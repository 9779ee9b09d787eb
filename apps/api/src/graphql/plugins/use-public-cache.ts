import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../context.js';
import type { RouteRules } from '@latchkey/policy';
import { getOperationAST, Kind, type DocumentNode, type ExecutionResult } from 'graphql';

export interface PublicCacheOptions {
  /** seconds a shared cache may keep the answer; 0 turns public caching off. @default 60 */
  maxAge: number;
  /** the route rules (the same judgement as the route check) */
  rules: RouteRules;
  /** root fields whose answer is the caller's own even for a guest (`rateLimit`): never publicly cached */
  uncached?: ReadonlySet<string>;
}

/**
 * Publicly cacheable answers (spec Authorization 14): only a GET (so a cache keys it by URL), sent
 * without credentials, for an operation made only of `@public` fields, that executed without errors, gets
 * `Cache-Control: public, max-age=N` and the `Vary` of what the answer depends on (`Accept`: its media type;
 * `Origin`: its CORS headers; `Authorization`: a credentialed request must never be served this entry). Every
 * other answer keeps the HTTP layer's `no-store` (`private, no-store` with `Vary: Authorization` when a
 * credential was sent): errors, PersistedQueryNotFound and anything a signed-in caller asked for included.
 *
 * The headers go straight onto the node response before Yoga writes it (a response hook would cost every
 * request); POSTs and WebSocket operations leave at the first check.
 */
export function usePublicCache(options: PublicCacheOptions): Plugin<GraphQLContext> {
  const cacheControl = `public, max-age=${options.maxAge}`;
  if (options.maxAge <= 0) return {};
  return {
    onExecute({ args }) {
      const { contextValue, schema, document, operationName } = args;
      const { req, res } = contextValue as GraphQLContext & { req?: IncomingMessage; res?: ServerResponse };
      if (!req || !res || req.method !== 'GET' || req.headers.authorization !== undefined || contextValue.caller !== null) return;
      const requirements = options.rules.requirementsOf(schema, document, operationName);
      if (requirements.signIn || requirements.introspection) return;
      if (options.uncached && selectsAny(document, operationName, options.uncached)) return;
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result || (result as ExecutionResult).errors?.length || res.headersSent) return;
          res.setHeader('cache-control', cacheControl);
          res.setHeader('vary', 'Accept, Origin, Authorization');
        },
      };
    },
  };
}

/** Whether the operation selects one of `fields` at its root (in a fragment too: whatever could answer it). */
function selectsAny(document: DocumentNode, operationName: string | null | undefined, fields: ReadonlySet<string>): boolean {
  const operation = getOperationAST(document, operationName);
  if (!operation) return false;
  return operation.selectionSet.selections.some((selection) => selection.kind !== Kind.FIELD || fields.has(selection.name.value));
}
