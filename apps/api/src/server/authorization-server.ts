import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createAuthorizationServer,
  createDrizzleAdapter,
  createLoginRoutes,
  htmlPage,
  OIDC_ROUTES,
  POLL_WINDOW_SECONDS,
  type AccessTokenVerifier,
  type AuditTrail,
  type ClientMetadata,
  type DeliveryHandler,
  type KeyMaterial,
  type Provider,
  createAppRevocation,
  createSessionEnding,
  createSignedOutListing,
  type AuthorizationServerOptions as ProviderOptions,
  type EndedSessions,
  type SignInLimits,
  watchConnectedAppUse,
  watchSessionUse,
} from '@latchkey/auth';
import { type DatabaseHandle, isDatabaseUnavailable, RETRY_AFTER_SECONDS, withDatabaseDeadline } from '@latchkey/db';
import { type ClientAddresses, type Route, requestMemo, sendHttpError, sendServiceUnavailable } from '@latchkey/http';
import type { Logger } from 'pino';
import type { Config } from '../config/load.js';
import type { SignInMethod } from '../observability/metrics.js';
import { auditServiceTokens, serviceTokenPolicy } from './service-tokens.js';

export interface AuthorizationServerOptions {
  config: Config;
  logger: Logger;
  database: DatabaseHandle;
  keys: KeyMaterial;
  delivery: DeliveryHandler;
  /** the login limits a sign-in method's routes use (counted by method when metrics are kept) */
  limitsFor: (method: SignInMethod) => SignInLimits;
  /** the limits a device's user code is entered under (the same counters as every sign-in of the address) */
  userCodeLimits: SignInLimits;
  verifier: AccessTokenVerifier;
  clientAddresses: ClientAddresses;
  requestIdOf: (req: IncomingMessage) => string | undefined;
  /** the sessions ended on any instance: ending one here adds it at once */
  endedSessions: EndedSessions;
  /** where sign-in events are recorded */
  audit: AuditTrail;
}

const SIGN_IN_UNAVAILABLE = 'Sign-in is unavailable. Try again shortly.';

/** The provider's fixed paths (its endpoints, the sign-out pages): each its own metrics label. */
const PROVIDER_PATHS = new Set<string>([...Object.values(OIDC_ROUTES), '/oidc/session/end/confirm', '/oidc/session/end/success']);

/**
 * The OpenID provider as Config describes it (issuer, key, clients, token lifetimes, acr levels), on the database.
 * The server mounts it with the login routes; the CLI builds it to send back-channel logouts.
 */
export function createConfiguredProvider(
  config: Config,
  keys: KeyMaterial,
  database: Pick<DatabaseHandle, 'db'>,
  served?: Pick<ProviderOptions, 'sessionNeedsLogin' | 'verifier' | 'onSignedOut' | 'services' | 'userCodeLimits' | 'onRuntimeWarning'>,
) {
  const signingJwk = keys.signing.key.export({ format: 'jwk' });
  return createAuthorizationServer({
    issuer: config.tokens.issuer,
    publicUrl: config.http.publicUrl,
    trustForwardedHeaders: config.http.trustProxy !== undefined,
    apiAudience: config.tokens.audience,
    apiAliases: [config.tokens.resourceIdentifier, ...config.tokens.acceptedAudiences],
    signingJwk: { ...signingJwk, kid: keys.signing.kid, alg: keys.signing.alg, use: 'sig' },
    db: database.db,
    adapter: createDrizzleAdapter(database.db),
    clients: config.auth.clients.map(
      ({ first_party: _firstParty, resource_server: _resourceServer, organization: _organization, role: _role, ...metadata }) =>
        metadata as ClientMetadata,
    ),
    firstPartyClientIds: config.auth.firstPartyClientIds,
    resourceServerClientIds: config.auth.resourceServerClientIds,
    accessTokenTtlSeconds: config.tokens.accessTokenTtlSeconds,
    renderPage: htmlPage,
    acrValues: config.auth.signInPolicy.acrLevels.map((level) => level.value),
    privateNetworkFetch: config.auth.privateNetworkFetch,
    ...served,
  });
}

/**
 * The authorization server: the OpenID provider (durable through the database) and the login pages and routes of
 * packages/auth, configured from Config and mounted as routes. Every one of its routes sees only the forwarded
 * headers a trusted proxy's word allows, rewritten (X-Forwarded-Host never), and has one database deadline
 * (DATABASE_TIMEOUT): a login route carries it in its request's scope (packages/auth/src/web/request-scope.ts),
 * the provider's endpoints find it through AsyncLocalStorage (see `mountedRoutes`).
 */
export async function createAuthorizationServerRoutes(options: AuthorizationServerOptions) {
  const { config, logger, database, keys } = options;
  // The login routes below answer `sessionNeedsLogin`: they need the provider, the provider asks them about sessions.
  // RP-initiated logout lists the session as ended, as ending it from the account page does.
  const listSignedOut = createSignedOutListing({
    accessTokenTtlSeconds: config.tokens.accessTokenTtlSeconds,
    clockSkewSeconds: config.tokens.clockSkewSeconds,
    endedSessions: options.endedSessions,
    audit: options.audit,
  });
  const provider = await createConfiguredProvider(config, keys, database, {
    sessionNeedsLogin: (query) => login.sessionNeedsLogin(query),
    verifier: options.verifier,
    onSignedOut: (session, request) =>
      listSignedOut(database.db, session, { reason: 'signed out by its user at an application', actor: session.accountId, request }),
    services: serviceTokenPolicy(config.auth.services, database.db, logger, options.audit),
    userCodeLimits: {
      limits: options.userCodeLimits,
      clientAddress: options.clientAddresses.addressOf,
      pollWindow: options.userCodeLimits.window('device-poll', { points: 1, durationSeconds: POLL_WINDOW_SECONDS, blockSeconds: 0 }),
    },
    // Its own line (stderr, at import) is held back: said here, in one line of ours, in the log.
    onRuntimeWarning: (warning) =>
      logger.info(
        { node: process.versions.node, warning },
        `oidc-provider warns of an unsupported runtime on Node ${process.versions.node}: expected in development and harmless (production runs Node 24, where it does not warn)`,
      ),
  });
  answerOutagesInProvider(provider);
  auditServiceTokens(provider, options.audit);
  // Each session's last use and client (the session list), from the provider's own events.
  watchSessionUse(provider, database.background, (error) => logger.warn({ err: error }, 'recording a session use failed'));
  // Ending sessions (GraphQL, the account page): the provider sends the back-channel logouts.
  const endSessions = createSessionEnding({
    accessTokenTtlSeconds: config.tokens.accessTokenTtlSeconds,
    clockSkewSeconds: config.tokens.clockSkewSeconds,
    endedSessions: options.endedSessions,
    provider,
    onBackchannelError: (error, { clientId }) => logger.warn({ err: error, clientId }, 'back-channel logout failed'),
    audit: options.audit,
  });
  // Third-party apps: each one's last use (Connected apps), and revoking one (the account page, GraphQL).
  watchConnectedAppUse(provider, database.background, new Set(config.auth.firstPartyClientIds), (error) =>
    logger.warn({ err: error }, 'recording an app use failed'),
  );
  const revokeApp = createAppRevocation({
    accessTokenTtlSeconds: config.tokens.accessTokenTtlSeconds,
    clockSkewSeconds: config.tokens.clockSkewSeconds,
    endedSessions: options.endedSessions,
    audit: options.audit,
  });
  const login = await createLoginRoutes({ ...loginRoutesOptions(options, provider, endSessions), revokeApp });
  return { routes: mountedRoutes(options, provider.callback(), login.routes), provider, endSessions, revokeApp };
}

/** A database outage met inside the provider is SERVICE_UNAVAILABLE (503 with Retry-After), not its server_error. */
function answerOutagesInProvider(provider: Provider): void {
  const unavailableInProvider = requestMemo<true>('a database outage met in the provider');
  provider.on('server_error', (ctx: object, error: unknown) => {
    if (isDatabaseUnavailable(error)) unavailableInProvider.set(ctx, true);
  });
  provider.use(async (ctx, next) => {
    await next();
    if (!unavailableInProvider.has(ctx)) return;
    ctx.status = 503;
    ctx.set('retry-after', String(RETRY_AFTER_SECONDS));
    ctx.body = { statusCode: 503, message: SIGN_IN_UNAVAILABLE, error: 'Service Unavailable', code: 'SERVICE_UNAVAILABLE' };
  });
}

/** The login pages' and routes' settings, from the configuration and the services start-up made. */
function loginRoutesOptions(
  options: AuthorizationServerOptions,
  provider: Provider,
  endSessions: Parameters<typeof createLoginRoutes>[0]['endSessions'],
): Parameters<typeof createLoginRoutes>[0] {
  const { config } = options;
  return {
    publicUrl: config.http.publicUrl,
    database: options.database,
    provider,
    firstPartyClientIds: config.auth.firstPartyClientIds,
    factors: config.auth.factors,
    policy: config.auth.signInPolicy,
    delivery: options.delivery,
    limits: options.limitsFor,
    log: options.logger,
    clientAddress: options.clientAddresses.addressOf,
    verifier: options.verifier,
    endSessions,
    keySecret: String(options.keys.signing.key.export({ format: 'jwk' }).d),
    selfSignup: config.auth.selfSignup,
    bindLinksToBrowser: config.auth.bindLinksToBrowser,
    relyingParty: config.auth.relyingParty,
    passwords: config.auth.passwords,
    upstream: config.auth.upstream,
    clientCertificates: config.auth.clientCertificates,
    audit: options.audit,
  };
}

/**
 * The authorization server's routes as mounted: the discovery document, the provider's endpoints and the login
 * routes, each with the provider's view of forwarded headers, failures answered. The login routes carry their
 * database deadline themselves; the provider's endpoints get theirs here.
 */
function mountedRoutes(
  options: AuthorizationServerOptions,
  oidc: ReturnType<Provider['callback']>,
  loginRoutes: readonly Route[],
): Route[] {
  const { logger, database, clientAddresses } = options;
  /**
   * What escapes a login route: a data store that is down or too slow is SERVICE_UNAVAILABLE (503 with
   * Retry-After); anything else is a masked 500 and an error log line.
   */
  function failed(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    const what = 'login route failed';
    if (isDatabaseUnavailable(error)) {
      logger.warn({ reqId: options.requestIdOf(req), reason: (error as Error).message }, `${what}: data store unavailable`);
      if (!res.headersSent) sendServiceUnavailable(res, RETRY_AFTER_SECONDS);
      return;
    }
    logger.error({ reqId: options.requestIdOf(req), err: error }, what);
    if (!res.headersSent) sendHttpError(res, 500, 'Internal server error.');
  }

  /**
   * A login route as mounted: the provider's view of forwarded headers, failures answered. Its database deadline
   * is its request's scope (packages/auth/src/web/request-scope.ts), passed explicitly.
   */
  const mounted = (route: Route): Route => ({
    ...route,
    handler(req, res, match) {
      clientAddresses.forProvider(req);
      (async () => route.handler(req, res, match))().catch((error: unknown) => failed(req, res, error));
    },
  });

  /** The provider's own endpoints: every one reads its sessions and grants from the database. */
  function providerEndpoint(req: IncomingMessage, res: ServerResponse): void {
    clientAddresses.forProvider(req);
    // During a known outage, at once.
    if (!database.health.available) return sendServiceUnavailable(res, RETRY_AFTER_SECONDS, SIGN_IN_UNAVAILABLE);
    // The one AsyncLocalStorage of a request's database deadline (withDatabaseDeadline), here and in the provider
    // calls a login route makes (`inProvider`): oidc-provider calls its adapter back without the request, so the
    // deadline cannot be passed to it.
    void withDatabaseDeadline(database.deadlineFromNow(), () => oidc(req, res));
  }

  return [
    {
      path: '/.well-known/openid-configuration',
      methods: 'any',
      handler(req, res) {
        clientAddresses.forProvider(req);
        void oidc(req, res);
      },
    },
    { path: '/oidc/*', methods: 'any', handler: providerEndpoint, templateOf: providerTemplateOf },
    ...loginRoutes.map(mounted),
  ];
}

/** The provider's paths as metrics labels: its fixed endpoints as they are, the rest by family. */
function providerTemplateOf(path: string): string {
  if (PROVIDER_PATHS.has(path)) return path;
  // The provider resumes an authorization at /oidc/auth/<uid> after the interaction.
  return path.startsWith('/oidc/auth/') ? '/oidc/auth/:uid' : '/oidc/*';
}
