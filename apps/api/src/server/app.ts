import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  createAccessTokenVerifier,
  createAuditTrail,
  createDpopProofCheck,
  type EndedSessions,
  type AuditWriter,
  type DeliveryHandler,
  type KeyMaterial,
  type SignInLimits,
  type SignedInCaller,
} from '@latchkey/auth';
import { type AccessTokenVerifier, describeProtectedResource, type ProtectedResource } from '@latchkey/auth/tokens';
import { recordDpopProofUse, type DatabaseHandle } from '@latchkey/db';
import { createClientAddresses, createRouteTable, sendHttpError } from '@latchkey/http';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Config } from '../config/load.js';
import { createDemoClient } from '../demo/page.js';
import { createLoaderFactory } from '../domain/loaders.js';
import { createSubjectLoader, type Subject } from '../domain/subject.js';
import { createGrantedScopes } from '../domain/scopes.js';
import { createServicePrincipals, type ServicePrincipals } from '../domain/service-principals.js';
import { fieldRulesOfType } from '../graphql/schema.js';
import type { FieldRule } from '@latchkey/policy';
import type { DocumentEventRecorder } from '../domain/document-events.js';
import type { SubscriptionHub } from '../events/subscription-hub.js';
import type { AppServices } from '../graphql/context.js';
import { countSignInLimits } from '../observability/counted-sign-in-limits.js';
import { auditDenials } from '../observability/audit-denials.js';
import type { ServiceMetrics, SignInMethod } from '../observability/metrics.js';
import { authenticate } from '../rest/authenticate.js';
import { documentRoutes } from '../rest/documents.js';
import type { BudgetStore } from '../budget/bucket.js';
import { createBudgets, type Budgets } from '../budget/budgets.js';
import { restBudgetCharge } from '../rest/budget-charge.js';
import { createRestRouter } from '../rest/router.js';
import { createAuthorizationServerRoutes } from './authorization-server.js';
import { createCors } from './cors.js';
import { createGraphQLRoute } from './graphql-route.js';
import { createGraphQLTransports } from './graphql-transports.js';
import type { createGraphQLWebSocket } from './graphql-ws.js';
import { createProbes } from './probes.js';
import { createRequestObserver, pathOf } from './request-observer.js';
import { routeTable } from './routes.js';

export interface HttpAppDeps {
  config: Config;
  logger: Logger;
  database: DatabaseHandle;
  keys: KeyMaterial;
  /** where one-time tokens are delivered (the development outbox, SMTP, ...) */
  delivery: DeliveryHandler;
  /** login rate limits and lockout */
  signInLimits: SignInLimits;
  /** this instance's subscriptions */
  subscriptions: SubscriptionHub;
  /** records document changes in the event outbox */
  events: DocumentEventRecorder;
  /** this instance's metrics (METRICS_PORT); undefined: none are kept */
  metrics?: ServiceMetrics;
  /** the audit trail's background writer (startAuditService) */
  auditWriter: AuditWriter;
  /** the GraphQL tracing plugin (OTEL_EXPORTER_OTLP_ENDPOINT); undefined: no spans */
  tracing?: Plugin;
  /** the sessions ended on any instance (read from the database every second): their tokens are refused */
  endedSessions: EndedSessions;
  /** where the budgets' buckets live (open-store.ts); undefined: this process's memory */
  budgetStore?: BudgetStore;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The services GraphQL resolvers and REST handlers reach. */
function appServices({
  config,
  database,
  audit,
  subjects,
  events,
  subscriptions,
  sessions,
  apps,
  budgets,
}: Pick<AppServices, 'database' | 'audit' | 'subjects' | 'events' | 'subscriptions' | 'sessions' | 'apps' | 'budgets'> & {
  config: Config;
}): AppServices {
  return {
    database,
    service: config.service,
    audit,
    subjects,
    loaders: createLoaderFactory(),
    events,
    subscriptions,
    sessions,
    apps,
    ...(budgets ? { budgets } : {}),
  };
}

/** Connected apps: revoking one (the authorization server's), and each client's registered name. */
function connectedAppServices(config: Config, revoke: AppServices['apps']['revoke']): AppServices['apps'] {
  const names = new Map<string, string>();
  for (const client of config.auth.clients) {
    if (typeof client['client_name'] === 'string' && client['client_name']) names.set(client.client_id, client['client_name']);
  }
  return { revoke, nameOf: (clientId) => names.get(clientId) ?? clientId };
}

/** The verifier of every access token this instance is shown (HTTP, WebSocket, the REST routes). */
function createVerifier(config: Config, database: DatabaseHandle, keys: KeyMaterial, endedSessions: EndedSessions): AccessTokenVerifier {
  return createAccessTokenVerifier({
    jwks: keys.jwks,
    algorithms: keys.algorithms,
    issuer: config.tokens.issuer,
    audience: config.tokens.acceptedAudiences,
    clockSkewSeconds: config.tokens.clockSkewSeconds,
    cacheSize: config.tokens.cacheSize,
    endedSessions,
    // DPoP-bound tokens (RFC 9449): each proof once across instances, through the database.
    checkProof: createDpopProofCheck({
      publicUrl: config.http.publicUrl,
      maxAgeSeconds: config.tokens.dpopProofMaxAgeSeconds,
      clockSkewSeconds: config.tokens.clockSkewSeconds,
      firstUse: (key, until) => recordDpopProofUse(database.db, key, until),
    }),
  });
}

interface RestApiDeps {
  config: Config;
  /** the API's protected resource metadata (RFC 9728), named by every 401 */
  protectedResource: ProtectedResource;
  /** the field rules the schema declares on `Document`, applied to REST's bodies */
  fieldRules: readonly FieldRule<Subject>[];
  app: AppServices;
  database: DatabaseHandle;
  verifier: AccessTokenVerifier;
  logger: Logger;
  requestIdOf: (req: IncomingMessage) => string | undefined;
  cors: ReturnType<typeof createCors>;
  budgets: Budgets | undefined;
}

/** Fair use: one set of buckets per instance, spent by GraphQL and REST alike; none with API_BUDGET=off. */
function budgetsOf(
  config: Config,
  database: DatabaseHandle,
  clientAddressOf: (req: IncomingMessage) => string,
  metrics: ServiceMetrics | undefined,
  store: BudgetStore | undefined,
  services: ServicePrincipals,
): Budgets | undefined {
  if (!config.budget.enabled) return undefined;
  return createBudgets({
    settings: config.budget,
    database,
    clientAddressOf,
    metrics: metrics?.budgets,
    services,
    ...(store ? { store } : {}),
  });
}

/** The REST routes under `/api` (documents), and the route templates they declare. */
function createRestApi({
  config,
  fieldRules,
  app,
  database,
  verifier,
  logger,
  requestIdOf,
  cors,
  budgets,
  protectedResource,
}: RestApiDeps) {
  const rest = createRestRouter<SignedInCaller>({
    routes: documentRoutes({ services: app, database, fieldRules }),
    middleware: [authenticate(verifier)],
    maxBodyBytes: config.limits.maxBodyBytes,
    onUnexpected: (error, req) => logger.error({ reqId: requestIdOf(req), err: error }, 'rest handler failed'),
    requestIdOf,
    ...(budgets ? { charge: restBudgetCharge(budgets) } : {}),
    grantedScopes: app.subjects.scopesOf,
    resourceMetadataUrl: protectedResource.url,
  });
  const { maxUrlBytes } = config.limits;

  /** `/api/...`: CORS, never stored by a shared cache (spec Authorization 14), then the REST router. */
  function api(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (req.method === 'OPTIONS') return cors.preflight(req, res);
    cors.apply(req, res);
    // Record-level answers depend on the caller.
    res.setHeader('cache-control', req.headers.authorization ? 'private, no-store' : 'no-store');
    res.setHeader('vary', 'Origin, Authorization');
    if (req.url!.length > maxUrlBytes) return sendHttpError(res, 414, 'URI Too Long');
    const query = req.url!.indexOf('?');
    void rest.handle(req, res, path, new URLSearchParams(query < 0 ? '' : req.url!.slice(query + 1)));
  }

  return { api, templateOf: rest.templateOf };
}

/** The demo client's page (OIDC_DEMO_CLIENT); undefined when there is none. */
function demoClientOf(config: Config) {
  return config.auth.demoClientId
    ? createDemoClient({
        publicUrl: config.http.publicUrl,
        clientId: config.auth.demoClientId,
        persisted: ({ apq: 'apq', allowlist: 'trusted', off: 'off' } as const)[config.persisted.mode],
      })
    : undefined;
}

const isPage = (path: string) => path === '/' || path === '/account' || path === '/login' || path.startsWith('/login/');

/** Set once shutdown begins: readiness fails at once and every response closes its connection. */
interface Lifecycle {
  draining: boolean;
}

/** Every request's way in (its id, the headers every response carries, then the route table), and HTTP upgrades. */
function createFrontDoor(
  config: Config,
  observer: ReturnType<typeof createRequestObserver>,
  table: ReturnType<typeof createRouteTable>,
  webSocket: ReturnType<typeof createGraphQLWebSocket>,
  lifecycle: Lifecycle,
) {
  // In development a page opened at another host than PUBLIC_URL's (127.0.0.1 for localhost, say) moves there
  // first: cookies, passkeys (the relying party) and the links in messages all belong to PUBLIC_URL, so a sign-in
  // started elsewhere would end on the wrong host.
  const redirectPagesToPublicUrl = config.env === 'development';
  const publicHost = new URL(config.http.publicUrl).host;

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const path = pathOf(req.url ?? '/');
    observer.begin(req, res, requestId, path);
    res.setHeader('x-request-id', requestId);
    res.setHeader('x-content-type-options', 'nosniff');
    // Shutting down: the client's next request goes to another instance (node closes after this response).
    if (lifecycle.draining) res.setHeader('connection', 'close');
    if (redirectPagesToPublicUrl && isPage(path) && req.headers.host !== publicHost && (req.method === 'GET' || req.method === 'HEAD')) {
      res.writeHead(307, { location: `${config.http.publicUrl}${req.url ?? '/'}`, 'content-length': 0 });
      res.end();
      return;
    }
    void table.dispatch(req, res, path);
  }

  /** HTTP upgrades: `/graphql` speaks graphql-ws; anything else is refused. */
  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    if (pathOf(req.url ?? '/') !== '/graphql') {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    webSocket.handleUpgrade(req, socket, head);
  }

  return { handle, upgrade };
}

/** Who a verified token is: a person (their account, by their token's scopes) or a registered service. */
function subjectsOf(config: Config) {
  const servicePrincipals = createServicePrincipals(config.auth.services);
  return { servicePrincipals, subjects: createSubjectLoader(createGrantedScopes(config.auth.firstPartyClientIds), servicePrincipals) };
}

/** The API as an OAuth protected resource (RFC 9728): its identifier, PUBLIC_URL, protected by this issuer. */
function protectedResourceOf(config: Config): ProtectedResource {
  return describeProtectedResource({
    resourceIdentifier: config.tokens.resourceIdentifier,
    issuer: config.tokens.issuer,
    name: 'Latchkey API',
  });
}

/**
 * The composition root of the HTTP front: it builds the GraphQL handler, the REST router, the authorization
 * server and the probes from Config, and answers each request through one declarative route table.
 */
export async function createHttpApp({
  config,
  logger,
  database,
  keys,
  delivery,
  signInLimits: uncountedLimits,
  subscriptions,
  events,
  metrics,
  auditWriter,
  tracing,
  endedSessions,
  budgetStore,
}: HttpAppDeps) {
  const protectedResource = protectedResourceOf(config);
  // With metrics on, rate-limit refusals are counted, and sign-in events by the method whose routes they come from.
  const countedLimits = metrics ? countSignInLimits(uncountedLimits, metrics) : undefined;
  const signInLimits = countedLimits?.limits ?? uncountedLimits;
  const limitsFor = (method: SignInMethod) => countedLimits?.forMethod(method) ?? uncountedLimits;
  const verifier = createVerifier(config, database, keys, endedSessions);
  // Who sent a request (TRUST_PROXY): the one source of the client address for limits, logs and the provider.
  const clientAddresses = createClientAddresses(config.http.trustProxy);
  const clientAddress = clientAddresses.addressOf;
  const observer = createRequestObserver({ logger, metrics, clientAddress });
  const requestIdOf = observer.requestIdOf;
  // The one AuditTrail of this instance: sign-in events (the login routes), policy denials, and whatever else records.
  const audit = createAuditTrail({ enqueue: auditWriter.enqueue, clientAddress, requestIdOf });
  const { servicePrincipals, subjects } = subjectsOf(config);
  const stopAuditingDenials = auditDenials({ audit, scopeOf: subjects.scopeOf });
  const authorization = await createAuthorizationServerRoutes({
    config,
    logger,
    database,
    keys,
    delivery,
    limitsFor,
    userCodeLimits: signInLimits,
    verifier,
    clientAddresses,
    requestIdOf,
    endedSessions,
    audit,
  });
  const sessions = { ended: endedSessions, end: authorization.endSessions };
  const budgets = budgetsOf(config, database, clientAddress, metrics, budgetStore, servicePrincipals);
  const apps = connectedAppServices(config, authorization.revokeApp);
  const app = appServices({ config, database, audit, subjects, events, subscriptions, sessions, apps, budgets });
  const { schema, yoga, webSocket, graphiql } = await createGraphQLTransports({
    config,
    logger,
    database,
    signInLimits,
    verifier,
    app,
    clientAddress,
    requestIdOf,
    metrics,
    tracing,
    budgets,
    protectedResource,
  });
  const cors = createCors({ origins: config.http.corsOrigins });
  const fieldRules = fieldRulesOfType(schema, 'Document');
  const rest = createRestApi({ config, fieldRules, app, database, verifier, logger, requestIdOf, cors, budgets, protectedResource });
  const lifecycle: Lifecycle = { draining: false };
  const probes = createProbes(database, () => lifecycle.draining);
  const table = createRouteTable(
    routeTable({
      graphql: createGraphQLRoute({ yoga, cors, limits: config.limits, graphiql, logger, requestIdOf }),
      api: rest.api,
      apiTemplateOf: rest.templateOf,
      authorization: authorization.routes,
      probes,
      jwksBody: JSON.stringify(keys.jwks),
      protectedResource,
      demo: demoClientOf(config),
    }),
  );
  observer.labelWith(table.templateOf);
  const { handle, upgrade } = createFrontDoor(config, observer, table, webSocket, lifecycle);

  return {
    handle,
    upgrade,
    /** shutdown began: /readyz answers 503 on every listener, responses carry `Connection: close` */
    drain: () => void (lifecycle.draining = true),
    probes,
    closeWebSockets: webSocket.close,
    terminateWebSockets: webSocket.terminate,
    webSocketClients: webSocket.clients,
    yoga,
    verifier,
    provider: authorization.provider,
    /** records security events (`record` never throws, never waits for the database) */
    audit,
    /** stops recording this instance's policy denials (at shutdown) */
    stopAuditingDenials,
  };
}

export type HttpApp = Awaited<ReturnType<typeof createHttpApp>>;
