import type { IncomingMessage } from 'node:http';
import type { SignInLimits } from '@latchkey/auth';
import type { AccessTokenVerifier } from '@latchkey/auth/tokens';
import type { DatabaseHandle } from '@latchkey/db';
import { createPersistedRequestResolver, listAppNames, ManifestError } from '@latchkey/persisted';
import { createRouteRules } from '@latchkey/policy';
import type { GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config/load.js';
import type { AppServices, GraphQLContext } from '../graphql/context.js';
import { createOperationCallers } from '../graphql/operation-callers.js';
import { graphiQLPage } from '../graphql/graphiql-page.js';
import { createPersistedOperations, importAllowlist, registerDemoOperations } from '../graphql/persisted.js';
import { buildSchema } from '../graphql/schema.js';
import { createCostEstimator } from '../graphql/plugins/use-cost-limit.js';
import { createGraphQLHandler } from '../graphql/yoga.js';
import { useResourceMetadata } from '../graphql/plugins/use-resource-metadata.js';
import type { ProtectedResource } from '@latchkey/auth/tokens';
import { useDeprecationReport } from '../graphql/plugins/use-deprecation-report.js';
import { createDeprecatedUses } from '../observability/deprecated-uses.js';
import { createKnownApps } from '../observability/known-apps.js';
import type { ServiceMetrics } from '../observability/metrics.js';
import { useOperationMetrics } from '../observability/use-operation-metrics.js';
import type { Budgets } from '../budget/budgets.js';
import { useApiBudget } from '../graphql/plugins/use-api-budget.js';
import { createGraphQLWebSocket } from './graphql-ws.js';

type PersistedOperations = ReturnType<typeof createPersistedOperations>;

/** The persisted-operation store, with the deploy-time allowlist imported and, in development, the demo page's operations. */
async function preparePersistedOperations(
  config: Config,
  database: DatabaseHandle,
  signInLimits: SignInLimits,
  logger: Logger,
  schema: GraphQLSchema,
): Promise<PersistedOperations> {
  const persisted = createPersistedOperations(config, database.db, signInLimits, logger);
  if (config.persisted.allowlist) {
    // Deploy-time allowlist (PERSISTED_ALLOWLIST_FILE): a manifest that does not fit this schema stops start-up.
    const { file, text } = config.persisted.allowlist;
    try {
      const imported = await importAllowlist(persisted.store, schema, text, config.limits);
      logger.info({ file, ...imported }, 'persisted-documents allowlist imported');
    } catch (error) {
      if (error instanceof ManifestError)
        throw new ConfigError(`invalid configuration:\n  PERSISTED_ALLOWLIST_FILE ${file}: ${error.message}`);
      throw error;
    }
  }
  // The demo page's operations go by hash first: registered now, its first visit finds them (no 404s in the console).
  if (config.env === 'development' && config.auth.demoClientId && config.persisted.mode === 'apq') {
    logger.debug({ operations: await registerDemoOperations(persisted.store) }, "registered the demo page's operations");
  }
  return persisted;
}

/**
 * `extensions.deprecated`, and each use counted (METRICS_PORT) and its last time kept in the database, for the client
 * a token or an imported app's header names. The imported apps are read before the first request.
 */
async function deprecationReportFor(database: DatabaseHandle, logger: Logger, metrics: ServiceMetrics | undefined) {
  const knownApps = createKnownApps({ list: () => listAppNames(database.background), logger });
  await knownApps.start();
  const uses = createDeprecatedUses({ db: database.background, logger, count: metrics?.deprecatedUse });
  return useDeprecationReport({ isKnownApp: knownApps.has, uses });
}

/** What the GraphQL transports, over HTTP (Yoga) and over WebSocket (graphql-ws), are built from. */
interface GraphQLTransportDeps {
  config: Config;
  logger: Logger;
  database: DatabaseHandle;
  signInLimits: SignInLimits;
  verifier: AccessTokenVerifier;
  app: AppServices;
  clientAddress: (req: IncomingMessage) => string;
  requestIdOf: (req: IncomingMessage) => string | undefined;
  metrics: ServiceMetrics | undefined;
  tracing: Plugin | undefined;
  /** the callers' cost budgets; undefined: API_BUDGET=off */
  budgets: Budgets | undefined;
  /** the API's protected resource metadata (RFC 9728), named by every 401 */
  protectedResource: ProtectedResource;
}

/** The schema and its persisted operations, and the GraphQL handler over HTTP and over WebSocket (GraphiQL's page too). */
export async function createGraphQLTransports(deps: GraphQLTransportDeps) {
  const { config, logger, database, signInLimits, verifier, app, clientAddress, requestIdOf, metrics, tracing, budgets } = deps;
  const resourceMetadata = useResourceMetadata({ metadataUrl: deps.protectedResource.url });
  const schema = buildSchema();
  const persisted = await preparePersistedOperations(config, database, signInLimits, logger, schema);
  const graphiql = config.graphiql ? graphiQLPage : undefined;
  // Who calls and what a guest may see: one resolution and one set of route rules for HTTP and WebSocket alike.
  const callers = createOperationCallers(verifier);
  const routeRules = createRouteRules();
  // One estimate per operation for MAX_COST and the budgets alike (one cache, asked twice in a row).
  const costEstimator = createCostEstimator(config.limits);
  const yoga = createGraphQLHandler({
    config,
    logger,
    verifier,
    callers,
    routeRules,
    app,
    requestIdOf: (req) => requestIdOf(req) ?? '',
    schema,
    health: database.health,
    persisted,
    clientAddress,
    operationMetrics: metrics && useOperationMetrics({ count: metrics.graphqlOperation }),
    countError: metrics?.graphqlError,
    tracing,
    deprecationReport: await deprecationReportFor(database, logger, metrics),
    budget:
      budgets &&
      useApiBudget({
        budgets,
        cost: config.limits,
        estimate: costEstimator,
        callerOf: (context) => callers.resolveUserFn(context as GraphQLContext),
      }),
    costEstimator,
    graphiql,
    resourceMetadata,
  });
  // GraphQL over WebSocket (graphql-ws) on /graphql: the same rules, applied on a path Yoga's HTTP plugins never see.
  const webSocket = createGraphQLWebSocket({
    yoga,
    verifier,
    callers,
    routeRules,
    logger,
    persisted: createPersistedRequestResolver(config.persisted.mode, persisted.store),
    allowRegistration: persisted.allowRegistration,
    clientAddress,
    allowedOrigins: new Set([new URL(config.http.publicUrl).origin, ...config.http.corsOrigins]),
    introspection: config.introspection,
    maxMessageBytes: config.subscriptions.wsMaxMessageBytes,
    maxOperationsPerConnection: config.subscriptions.perConnection,
  });
  return { schema, yoga, webSocket, graphiql };
}
