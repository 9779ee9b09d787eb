import type { IncomingMessage } from 'node:http';
import { usePersistedOperations, type PersistedOperationStore, type RegistrationDecision } from '@latchkey/persisted';
import { useAuthorizationErrors, useRouteRules, type RouteRules } from '@latchkey/policy';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { handleMaybePromise } from '@whatwg-node/promise-helpers';
import { createYoga, maskError, type Plugin, type YogaLogger } from 'graphql-yoga';
import { isDatabaseUnavailable, type DatabaseHealth } from '@latchkey/db';
import { isDomainError } from '../domain/errors.js';
import { insufficientScope, serviceUnavailableAt, unauthenticated } from './errors.js';
import type { Logger } from 'pino';
import type { Config } from '../config/load.js';
import { callerFrom, type AccessTokenVerifier } from '@latchkey/auth/tokens';
import { operationContext, type AppServices, type GraphQLContext, type RequestContext } from './context.js';
import type { OperationCallers } from './operation-callers.js';
import { DATABASE_FREE_FIELDS } from './schema.js';
import { useCostLimit, type CostEstimator } from './plugins/use-cost-limit.js';
import { useDatabaseAvailability } from './plugins/use-database-availability.js';
import { useErrorCodes } from './plugins/use-error-codes.js';
import { useErrorLog } from './plugins/use-error-log.js';
import { useHiddenSuggestions } from './plugins/use-hidden-suggestions.js';
import { useCompiledExecution } from './plugins/use-compiled-execution.js';
import { useIncrementalDelivery } from './plugins/use-incremental-delivery.js';
import { useQueryLimits } from './plugins/use-query-limits.js';
import { usePublicCache } from './plugins/use-public-cache.js';
import { useIntrospectionAccess } from './plugins/use-introspection-access.js';
import { useStepUp } from './plugins/use-step-up.js';
import { useStreamedConnection } from './plugins/use-streamed-connection.js';
import { useStrictParams } from './plugins/use-strict-params.js';
import { GRAPHIQL_OPTIONS, type GraphiQLPage } from './graphiql-page.js';
import { DONE_BY_THE_HTTP_LAYER } from './yoga-http-layer.js';

export interface GraphQLHandlerDeps {
  config: Config;
  logger: Logger;
  verifier: AccessTokenVerifier;
  /** who calls: each operation's caller, resolved once (`createOperationCallers`) */
  callers: OperationCallers;
  /** what a guest may see: the route rules shared with the WebSocket start and public caching */
  routeRules: RouteRules;
  app: AppServices;
  /** the id the HTTP layer gave this request (for logs) */
  requestIdOf: (req: IncomingMessage) => string;
  /** the executable schema (buildSchema()) */
  schema: GraphQLSchema;
  /** whether the database is reachable (operations that need it are refused during an outage) */
  health: DatabaseHealth;
  /** persisted operations: where they live, and the registration budget of a client address */
  persisted: {
    store: PersistedOperationStore;
    allowRegistration: (ip: string) => Promise<RegistrationDecision>;
  };
  /** the client's address (TRUST_PROXY decides whose forwarded headers count) */
  clientAddress: (req: IncomingMessage) => string;
  /** the operation-metrics plugin (METRICS_PORT); undefined: no operations are counted */
  operationMetrics?: Plugin;
  /** counts an error leaving the server by its code (METRICS_PORT); undefined: none are counted */
  countError?: (code: string | undefined) => void;
  /** the tracing plugin (OTEL_EXPORTER_OTLP_ENDPOINT); undefined: no spans */
  tracing?: Plugin;
  /** `extensions.deprecated` and the count of each use (`useDeprecationReport`) */
  deprecationReport: Plugin<GraphQLContext>;
  /** names the API's protected resource metadata in every 401 (`useResourceMetadata`) */
  resourceMetadata: Plugin;
  /** the callers' cost budgets (API_BUDGET); undefined: off */
  budget?: Plugin<GraphQLContext>;
  /** the cost estimator MAX_COST shares with the budgets; undefined: one of its own */
  costEstimator?: CostEstimator;
  /** the GraphiQL page (GRAPHIQL on); undefined: none is served */
  graphiql?: () => Promise<GraphiQLPage>;
}

/** The caller's own figures, even for a guest: never in a shared cache. */
const UNCACHED_FIELDS: ReadonlySet<string> = new Set(['rateLimit']);

const noop = () => {};

/** Yoga logs through pino. Disabled levels are plain no-ops: Yoga calls debug() several times per request. */
function yogaLogger(logger: Logger): YogaLogger {
  const child = logger.child({ component: 'graphql' });
  const at = (level: 'debug' | 'info' | 'warn') =>
    child.isLevelEnabled(level) ? (...args: unknown[]) => child[level]({ args }, 'yoga') : noop;
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: (...args: unknown[]) => {
      const [first] = args;
      if (first instanceof Error) child.error({ err: first }, 'graphql error');
      else child.error({ args }, 'graphql error');
    },
  };
}

/**
 * Domain failures (NOT_FOUND, BAD_USER_INPUT) carry fixed, safe messages: they leave with their code at the
 * field's path, as execution errors without an HTTP status. Everything else unexpected is masked.
 */
function domainErrorsUnmasked(error: unknown, message: string, isDev?: boolean): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (error instanceof GraphQLError && isDomainError(original)) {
    const field = 'field' in original && original.field ? { field: original.field } : {};
    return new GraphQLError(original.message, { nodes: error.nodes, path: error.path, extensions: { code: original.code, ...field } });
  }
  // The database went away (or did not answer in time) under this field: say so, never INTERNAL_SERVER_ERROR.
  if (error instanceof GraphQLError && isDatabaseUnavailable(original)) return serviceUnavailableAt(error);
  return maskError(error, message, isDev);
}

export function createGraphQLHandler({
  config,
  logger,
  verifier,
  callers,
  routeRules,
  app,
  requestIdOf,
  schema,
  health,
  persisted,
  clientAddress,
  operationMetrics,
  countError,
  tracing,
  deprecationReport,
  budget,
  costEstimator,
  graphiql,
  resourceMetadata,
}: GraphQLHandlerDeps) {
  const { limits } = config;

  const signedInRequest = (req: IncomingMessage) =>
    handleMaybePromise(
      () => callerFrom(verifier, { authorization: req.headers.authorization }),
      (result) => result?.ok === true,
      () => false, // only decides whether suggestions are shown
    );
  return createYoga<{ req?: IncomingMessage }, RequestContext>({
    schema,
    graphqlEndpoint: '/graphql',
    // The caller is resolved by generic-auth (callers.useCaller), once per operation at the root (spec Authentication 5).
    context: ({ req }) => operationContext(app, req ? requestIdOf(req) : ''),
    plugins: [
      // First: it fills in the text of a persisted operation that the parameter checks then see.
      usePersistedOperations<{ req?: IncomingMessage }>({
        mode: config.persisted.mode,
        store: persisted.store,
        allowRegistration: (_request, { req }) => persisted.allowRegistration(req ? clientAddress(req) : 'unknown'),
        onRegistrationError: (error) => logger.error({ err: error }, 'persisted-query registration failed'),
      }),
      useStrictParams(),
      // @defer and @stream (the incremental-delivery working draft), answered over multipart/mixed or SSE.
      useIncrementalDelivery(),
      useCompiledExecution(),
      // SSE and multipart answers: node, not Yoga, decides whether the connection stays open.
      useStreamedConnection(),
      useQueryLimits(limits),
      // Before the other checks before execution: what they refuse is charged its minimum (docs/graphql.md, "Budgets").
      ...(budget ? [budget] : []),
      useCostLimit(limits, costEstimator),
      useIntrospectionAccess({ introspection: config.introspection, rules: routeRules, challengeOf: callers.challengeOf }),
      // Route level (spec Authorization 1, 4, 7): the caller resolved once per operation, then judged once per document.
      callers.useCaller(),
      useRouteRules<GraphQLContext>({
        rules: routeRules,
        isGuest: (context) => context.caller === null,
        refusal: (context) => unauthenticated(callers.challengeOf(context)),
        // What the caller may do is its rights and its token's scopes: a missing scope refuses the operation whole.
        grantedScopes: (context) => app.subjects.scopesOf(context.caller),
        scopeRefusal: insufficientScope,
      }),
      useDatabaseAvailability({ health, deadlineFromNow: app.database.deadlineFromNow, databaseFree: DATABASE_FREE_FIELDS }),
      useHiddenSuggestions({ introspection: config.introspection, signedIn: signedInRequest }),
      usePublicCache({ maxAge: config.publicCacheMaxAge, rules: routeRules, uncached: UNCACHED_FIELDS }),
      useAuthorizationErrors(),
      useStepUp(),
      // Last of the execution plugins: only operations that pass every check before execution are counted, or get a span.
      ...(operationMetrics ? [operationMetrics] : []),
      ...(tracing ? [tracing] : []),
      // Likewise: only operations that run are reported and counted as uses of what they select.
      deprecationReport,
      useErrorLog(logger),
      useErrorCodes({ onError: countError }),
      resourceMetadata,
    ],
    batching: limits.maxBatch > 0 ? { limit: limits.maxBatch } : false,
    ...DONE_BY_THE_HTTP_LAYER,
    graphiql: graphiql ? GRAPHIQL_OPTIONS : false,
    ...(graphiql ? { renderGraphiQL: async () => (await graphiql()).render() } : {}),
    maskedErrors: { isDev: false, errorMessage: 'Internal server error.', maskError: domainErrorsUnmasked },
    logging: yogaLogger(logger),
  });
}

export type GraphQLHandler = ReturnType<typeof createGraphQLHandler>;
