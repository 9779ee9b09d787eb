import type { IncomingMessage } from 'node:http';
import { operationUsage, type Deprecation } from '@latchkey/schema-contract';
import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../context.js';

/** Where the uses of deprecated coordinates go: counted and recorded (`createDeprecatedUses`). */
export interface DeprecatedUseSink {
  /** one operation that uses `deprecated` (each coordinate once), for `client` */
  used(deprecated: readonly Deprecation[], client: string): void;
  /** resolves once nothing is being written (at shutdown, before the database closes) */
  idle(): Promise<void>;
}

export interface DeprecationReportOptions {
  /** whether `name` is an app imported with `--app`: only such a name, sent as a client-name header, is a client */
  isKnownApp(name: string): boolean;
  /** where each use goes; undefined: uses are reported to the client only */
  uses?: DeprecatedUseSink;
  /** the deprecated coordinates an operation uses, worked out once per document and operation name @default operationUsage */
  deprecationsOf?: (schema: GraphQLSchema, document: DocumentNode, operationName: string | null) => readonly Deprecation[];
}

/** The client of a use when neither a token nor a known app's header names one. */
export const UNKNOWN_CLIENT = 'unknown';

/** Client-name headers, in the order they are read: Hive's convention, then Apollo's. */
const CLIENT_NAME_HEADERS = ['graphql-client-name', 'apollographql-client-name'] as const;

/** Longer than any app name: a longer header names no app, and is not even looked up. */
const MAX_CLIENT_NAME = 128;

const deprecatedOf = (schema: GraphQLSchema, document: DocumentNode, operationName: string | null) =>
  operationUsage(schema, document, operationName).deprecated;

type Context = GraphQLContext & { req?: IncomingMessage };
type ResultArgs = { result: unknown; setResult: (result: ExecutionResult) => void };

/**
 * `extensions.deprecated` (docs/graphql.md, "Deprecations"): an operation that uses deprecated fields, arguments, input
 * fields or enum values is told which, with each reason, and each use is counted for the client that made it. What
 * an operation uses is worked out once per document and operation name, never per request: Yoga's parse cache and the
 * persisted-operation memo hand out one DocumentNode per text or id, the key of the cache. Listed after every check
 * before execution, so only operations that run are reported and counted; in the execute and subscribe hooks, so
 * every transport has it (HTTP, batches, persisted ids, SSE, WebSocket). @defer / @stream report in their first
 * payload, a subscription in its first event. An operation that uses nothing deprecated costs a map lookup.
 */
export function useDeprecationReport(options: DeprecationReportOptions): Plugin<GraphQLContext> {
  const { isKnownApp, uses } = options;
  const deprecationsOf = options.deprecationsOf ?? deprecatedOf;
  const known = new WeakMap<DocumentNode, Map<string | null, readonly Deprecation[]>>();

  /** What the operation uses that is deprecated, from the document's cache (filled on its first run). */
  const deprecationsIn = (schema: GraphQLSchema, document: DocumentNode, name: string | null): readonly Deprecation[] => {
    let byOperation = known.get(document);
    if (!byOperation) known.set(document, (byOperation = new Map()));
    let deprecated = byOperation.get(name);
    // Shared by every answer of the document, never changed once made; not frozen, which JSON.stringify reads slower.
    if (!deprecated) byOperation.set(name, (deprecated = deprecationsOf(schema, document, name)));
    return deprecated;
  };

  /**
   * The client a use counts for, a value the server chose: the verified token's client (the server issued it), else a
   * client-name header that names an imported app, else `unknown`. Headers are a WebSocket's upgrade request's.
   */
  const clientOf = (context: Context): string => {
    if (context.caller?.clientId) return context.caller.clientId;
    for (const header of CLIENT_NAME_HEADERS) {
      const name = context.req ? context.req.headers[header] : context.request?.headers.get(header);
      if (typeof name === 'string' && name.length <= MAX_CLIENT_NAME && isKnownApp(name)) return name;
    }
    return UNKNOWN_CLIENT;
  };

  const report = (args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; contextValue: unknown }) => {
    const deprecated = deprecationsIn(args.schema, args.document, args.operationName ?? null);
    if (deprecated.length === 0) return undefined;
    uses?.used(deprecated, clientOf(args.contextValue as Context));
    return deprecated;
  };

  return {
    onExecute({ args }) {
      const deprecated = report(args);
      if (!deprecated) return;
      return {
        onExecuteDone({ result, setResult }: ResultArgs) {
          if (!isAsyncIterable(result)) return void setResult(withDeprecated(result as ExecutionResult, deprecated));
          // @defer / @stream: in the initial payload, the one every client reads.
          return { onNext: firstOnly(deprecated) };
        },
      };
    },
    onSubscribe({ args }) {
      const deprecated = report(args);
      if (!deprecated) return;
      return {
        onSubscribeResult({ result, setResult }: ResultArgs) {
          // A subscription refused when it starts answers one result; one that started reports in its first event.
          if (!isAsyncIterable(result)) return void setResult(withDeprecated(result as ExecutionResult, deprecated));
          return { onNext: firstOnly(deprecated) };
        },
      };
    },
    onDispose: () => uses?.idle(),
  };
}

/** An `onNext` that reports in the first payload only. */
function firstOnly(deprecated: readonly Deprecation[]) {
  let first = true;
  return ({ result, setResult }: ResultArgs) => {
    if (!first) return;
    first = false;
    setResult(withDeprecated(result as ExecutionResult, deprecated));
  };
}

/**
 * The result with its deprecations, beside whatever extensions it has (`cost`). Copied with Object.assign, as the
 * budgets copy their cost (use-api-budget.ts): an object spread followed by a key of its own gives every answer a
 * hidden class of its own in V8. Not caller-specific (the document and the schema decide it), so a publicly cacheable
 * answer keeps it.
 */
const withDeprecated = (result: ExecutionResult, deprecated: readonly Deprecation[]): ExecutionResult =>
  Object.assign({}, result, {
    extensions: result.extensions ? Object.assign({}, result.extensions, { deprecated }) : { deprecated },
  });
