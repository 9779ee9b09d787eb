import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DatabaseHandle } from '@latchkey/db';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config.js';
import { ErrorCode } from '../graphql/errors.js';
import { createLoaderFactory } from '../domain/loaders.js';
import { createSubjectLoader } from '../domain/subjects.js';
import { graphiQLPage } from '../graphql/graphiql-page.js';
import { createGraphQLHandler } from '../graphql/yoga.js';
import { createPersistedOperations, importAllowlist } from '../graphql/persisted.js';
import { buildSchema } from '../graphql/schema.js';
import { createPersistedRequestResolver, ManifestError } from '@latchkey/persisted';
import type { Duplex } from 'node:stream';
import type { DocumentEventRecorder } from '../events/outbox.js';
import type { SubscriptionHub } from '../events/subscription-hub.js';
import { createGraphQLWebSocket } from './graphql-ws.js';
import { createAccessTokenVerifier, principalFrom, type KeyMaterial, type Principal } from '@latchkey/auth/tokens';
import { authenticate } from '../rest/authenticate.js';
import { documentRoutes } from '../rest/documents.js';
import { createRestRouter } from '../rest/router.js';
import { createClientAddresses } from './client-address.js';
import { createCors } from './cors.js';
import {
  createAuthorizationServer,
  createDrizzleAdapter,
  deriveTotpKey,
  readProviderSession,
  type ClientMetadata,
  type DeliveryHandler,
  type LoginLimits,
} from '@latchkey/auth';
import { createDemoClient } from '../demo/page.js';
import { createAccountRoutes } from '../login/account.js';
import { page } from '../login/html.js';
import { createPasskeyRoutes } from '../login/passkeys.js';
import { createLoginRoutes } from '../login/routes.js';
import { createSignInFlow, DEVICE_COOKIE } from '../login/sign-in-flow.js';
import { parseCookie } from 'cookie';
import { readCookie as readCookieValue } from '../login/cookies.js';
import { createFactorPages } from '../login/factor-pages.js';
import { createUpstreamRoutes } from '../login/upstream.js';
import { createClientCertificateSignIn } from '../login/client-certificate.js';
import { createSecondFactors } from '../login/second-factors.js';
import { acceptable, acceptableContentType } from './media-types.js';
import { BodyTooLargeError, readBody } from './read-body.js';
import { sendGraphQLRequestError, sendHttpError, sendJson, sendServiceUnavailable } from './respond.js';
import { isDatabaseUnavailable, RETRY_AFTER_SECONDS, withDatabaseDeadline } from '@latchkey/db';
import type { Plugin } from 'graphql-yoga';
import { countLoginLimits } from '../observability/counted-login-limits.js';
import type { ServiceMetrics, SignInMethod } from '../observability/metrics.js';
import { createRouteTemplates } from './route-template.js';

export interface HttpAppDeps {
  config: Config;
  logger: Logger;
  database: DatabaseHandle;
  keys: KeyMaterial;
  /** where one-time tokens are delivered (the development outbox, SMTP, ...) */
  delivery: DeliveryHandler;
  /** login rate limits and lockout */
  loginLimits: LoginLimits;
  /** this instance's subscriptions */
  subscriptions: SubscriptionHub;
  /** records document changes in the event outbox */
  events: DocumentEventRecorder;
  /** this instance's metrics (METRICS_PORT); undefined: none are kept */
  metrics?: ServiceMetrics;
  /** the GraphQL tracing plugin (OTEL_EXPORTER_OTLP_ENDPOINT); undefined: no spans */
  tracing?: Plugin;
}

/** Per-request state, kept beside the request (a WeakMap, not expando properties on node's objects). */
interface RequestState {
  id: string;
  path: string;
  startedAt: number;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const KNOWN_GET_ROUTES = new Set(['/healthz', '/readyz', '/.well-known/jwks.json']);
const FACTOR_FORMS = new Map<string, 'totp' | 'recoveryCode' | 'totpSetup' | 'totpConfirm' | 'password' | 'passwordSetup'>([
  ['/login/totp', 'totp'],
  ['/login/password', 'password'],
  ['/login/password/setup', 'passwordSetup'],
  ['/login/recovery-code', 'recoveryCode'],
  ['/login/totp/setup', 'totpSetup'],
  ['/login/totp/confirm', 'totpConfirm'],
]);
const ACCOUNT_FORMS = new Set([
  '/account/passkeys/rename',
  '/account/passkeys/remove',
  '/account/totp/setup',
  '/account/totp/confirm',
  '/account/totp/remove',
  '/account/recovery-codes',
  '/account/devices/forget',
  '/account/password',
  '/account/password/remove',
  '/account/upstream/link',
  '/account/upstream/unlink',
]);
/** Signing in through an upstream OpenID provider, and linking its identities: path → method, handler. */
const UPSTREAM_ROUTES = new Map<string, ['GET' | 'POST', 'start' | 'callback' | 'linkForm' | 'unlinkForm']>([
  ['/login/upstream', ['GET', 'start']],
  ['/login/upstream/callback', ['GET', 'callback']],
  ['/account/upstream/link', ['POST', 'linkForm']],
  ['/account/upstream/unlink', ['POST', 'unlinkForm']],
]);
const PASSKEY_PATHS = new Set(['/webauthn/register/options', '/webauthn/register', '/webauthn/authenticate/options', '/login/webauthn']);
/** The path of a request URL, without its query string (which may carry secrets, and is never a label or a log field). */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/**
 * The HTTP front: request id, logging, transport limits (URL, body), CSRF content-type rule and CORS
 * are handled here in plain node:http, before Yoga, where they cost the least.
 */
export async function createHttpApp({
  config,
  logger,
  database,
  keys,
  delivery,
  loginLimits: uncountedLimits,
  subscriptions,
  events,
  metrics,
  tracing,
}: HttpAppDeps) {
  const { limits } = config;
  // With metrics on, rate-limit refusals are counted, and sign-in events by the method whose routes they come from.
  const countedLimits = metrics ? countLoginLimits(uncountedLimits, metrics) : undefined;
  const loginLimits = countedLimits?.limits ?? uncountedLimits;
  const limitsFor = (method: SignInMethod) => countedLimits?.forMethod(method) ?? uncountedLimits;
  const verifier = createAccessTokenVerifier({
    jwks: keys.jwks,
    algorithms: keys.algorithms,
    issuer: config.tokens.issuer,
    audience: config.tokens.audience,
    clockSkewSeconds: config.tokens.clockSkewSeconds,
    cacheSize: config.tokens.cacheSize,
  });
  const states = new WeakMap<IncomingMessage, RequestState>();
  // Who sent a request (TRUST_PROXY): the one source of the client address for limits, logs and the provider.
  const clientAddresses = createClientAddresses(config.http.trustProxy);
  const clientAddress = clientAddresses.addressOf;
  const app = {
    database,
    databaseTimeoutMs: config.database.timeoutMs,
    service: config.service,
    subjects: createSubjectLoader(),
    loaders: createLoaderFactory(),
    events,
    subscriptions,
  };
  const schema = buildSchema();
  const persisted = createPersistedOperations(config, database.db, loginLimits, logger);
  if (config.persisted.allowlist) {
    // Deploy-time allowlist (PERSISTED_ALLOWLIST_FILE): a manifest that does not fit this schema stops start-up.
    const { file, text } = config.persisted.allowlist;
    try {
      const imported = await importAllowlist(persisted.store, schema, text, limits);
      logger.info({ file, ...imported }, 'persisted-documents allowlist imported');
    } catch (error) {
      if (error instanceof ManifestError)
        throw new ConfigError(`invalid configuration:\n  PERSISTED_ALLOWLIST_FILE ${file}: ${error.message}`);
      throw error;
    }
  }
  const graphiql = config.graphiql ? graphiQLPage : undefined;
  const yoga = createGraphQLHandler({
    config,
    logger,
    verifier,
    app,
    requestIdOf: (req) => states.get(req)?.id ?? '',
    schema,
    health: database.health,
    persisted,
    clientAddress,
    metrics,
    tracing,
    graphiql,
  });
  // GraphQL over WebSocket (graphql-ws) on /graphql: the same rules, applied on a path Yoga's HTTP plugins never see.
  const webSocket = createGraphQLWebSocket({
    yoga,
    verifier,
    logger,
    persisted: createPersistedRequestResolver(config.persisted.mode, persisted.store),
    allowRegistration: persisted.allowRegistration,
    clientAddress,
    allowedOrigins: new Set([new URL(config.http.publicUrl).origin, ...config.http.corsOrigins]),
    introspection: config.introspection,
    maxMessageBytes: config.subscriptions.wsMaxMessageBytes,
    maxOperationsPerConnection: config.subscriptions.perConnection,
  });
  const rest = createRestRouter<Principal>({
    // One deadline per request for everything it asks the database (DATABASE_TIMEOUT from the route's start).
    routes: documentRoutes(async ({ req, caller }, handler) => {
      const db = database.until(performance.now() + config.database.timeoutMs);
      return {
        db,
        subject: await app.subjects(req, caller?.subject ?? null, db),
        loaders: app.loaders(req, db),
        handler,
        events: app.events,
      };
    }),
    middleware: [authenticate(verifier)],
    maxBodyBytes: limits.maxBodyBytes,
    onUnexpected: (error, req) => logger.error({ reqId: states.get(req)?.id, err: error }, 'rest handler failed'),
  });
  const cors = createCors({ origins: config.http.corsOrigins });

  // The authorization server: the OpenID provider (durable through the database) and the login pages.
  const provider = await createAuthorizationServer({
    issuer: config.tokens.issuer,
    publicUrl: config.http.publicUrl,
    trustForwardedHeaders: config.http.trustProxy !== undefined,
    apiAudience: config.tokens.audience,
    signingJwk: { ...keys.signing.key.export({ format: 'jwk' }), kid: keys.signing.kid, alg: keys.signing.alg, use: 'sig' },
    db: database.db,
    adapter: createDrizzleAdapter(database.db),
    clients: config.auth.clients.map(({ first_party: _firstParty, ...metadata }) => metadata as ClientMetadata),
    firstPartyClientIds: config.auth.firstPartyClientIds,
    accessTokenTtlSeconds: config.tokens.accessTokenTtlSeconds,
    renderPage: page,
    acrValues: config.auth.signInPolicy.acrLevels.map((level) => level.value),
    // Set below: the flow needs the provider, the provider asks the flow about existing sessions.
    sessionNeedsLogin: async (query) =>
      !(await flow.sessionMeets(
        query.sessionUid,
        query.accountId,
        query.acrValues,
        query.cookieHeader ? parseCookie(query.cookieHeader)[DEVICE_COOKIE] : undefined,
      )),
  });
  const flow = createSignInFlow({
    db: database.db,
    provider,
    policy: config.auth.signInPolicy,
    secure: config.http.publicUrl.startsWith('https:'),
  });
  // A database outage met inside the provider is SERVICE_UNAVAILABLE (503 with Retry-After), not its server_error.
  const unavailableInProvider = new WeakSet<object>();
  provider.on('server_error', (ctx: object, error: unknown) => {
    if (isDatabaseUnavailable(error)) unavailableInProvider.add(ctx);
  });
  provider.use(async (ctx, next) => {
    await next();
    if (!unavailableInProvider.has(ctx)) return;
    ctx.status = 503;
    ctx.set('retry-after', String(RETRY_AFTER_SECONDS));
    ctx.body = {
      statusCode: 503,
      message: 'Sign-in is unavailable. Try again shortly.',
      error: 'Service Unavailable',
      code: 'SERVICE_UNAVAILABLE',
    };
  });
  const oidc = provider.callback();
  const demo = config.auth.demoClientId
    ? createDemoClient({
        publicUrl: config.http.publicUrl,
        clientId: config.auth.demoClientId,
        persisted: ({ apq: 'apq', allowlist: 'trusted', off: 'off' } as const)[config.persisted.mode],
      })
    : undefined;
  const login = createLoginRoutes({
    publicUrl: config.http.publicUrl,
    db: database.db,
    provider,
    delivery,
    limits: limitsFor('OTT'),
    logger,
    selfSignup: config.auth.selfSignup,
    flow,
    upstreamName: config.auth.upstream?.name,
    clientAddress,
  });
  const passkeys = config.auth.relyingParty
    ? createPasskeyRoutes({
        publicUrl: config.http.publicUrl,
        db: database.db,
        relyingParty: config.auth.relyingParty,
        limits: limitsFor('WEBAUTHN'),
        logger,
        flow,
        clientAddress,
        // An access token (API clients, the demo client) or, without one, the provider session (account page).
        caller: async (req, res) => {
          const result = await principalFrom(verifier, { authorization: req.headers.authorization });
          if (result !== undefined) return result.ok ? result.principal : 'rejected';
          const session = await readProviderSession(provider, req, res);
          // A session past a factor's validity (spec Multi-factor rules 2) is no caller until it is renewed.
          if (!session || !(await flow.sessionMeets(session.sessionUid, session.accountId, [], readCookieValue(req, DEVICE_COOKIE))))
            return null;
          return { subject: session.accountId, acr: session.acr || null, authTime: session.authTime };
        },
      })
    : undefined;

  const signingJwk = keys.signing.key.export({ format: 'jwk' });
  // TOTP secrets are sealed with a key derived from the signing key: every instance that shares it agrees.
  const totpKey = deriveTotpKey(String(signingJwk.d));
  const factorPages = createFactorPages({
    publicUrl: config.http.publicUrl,
    db: database.db,
    flow,
    secondFactors: createSecondFactors(database.db, totpKey, config.auth.relyingParty?.name ?? 'Latchkey', config.auth.passwords),
    limits: limitsFor,
    logger,
    passkeys: config.auth.relyingParty !== undefined,
    upstreamName: config.auth.upstream?.name,
    clientAddress,
  });
  // `/login/x509`: answered on the TLS listener (TLS_PORT with client certificates) only.
  const clientCertificates = createClientCertificateSignIn({
    publicUrl: config.http.publicUrl,
    db: database.db,
    flow,
    limits: limitsFor('X509'),
    logger,
    users: config.auth.clientCertificates,
    clientAddress,
  });
  const account = createAccountRoutes({
    publicUrl: config.http.publicUrl,
    db: database.db,
    provider,
    flow,
    totpKey,
    issuer: config.auth.relyingParty?.name,
    passkeysEnabled: passkeys !== undefined,
    passwords: config.auth.passwords,
    upstreamSection: config.auth.upstream ? (userId) => upstream!.accountSection(userId) : undefined,
  });
  // Sign-in through an upstream OpenID provider (UPSTREAM_ISSUER); its identities are linked on the account page.
  const upstream = config.auth.upstream
    ? createUpstreamRoutes({
        publicUrl: config.http.publicUrl,
        db: database.db,
        flow,
        limits: limitsFor('AUTHORIZATION_CODE'),
        logger,
        upstream: config.auth.upstream,
        keySecret: String(signingJwk.d),
        account,
        clientAddress,
      })
    : undefined;

  const jwksBody = JSON.stringify(keys.jwks);
  const logRequests = logger.isLevelEnabled('info');
  const timeRequests = logRequests || metrics !== undefined;
  const routeTemplate = createRouteTemplates(
    [
      '/graphql',
      '/healthz',
      '/readyz',
      '/.well-known/jwks.json',
      '/ott/generate',
      '/login',
      '/login/ott',
      '/login/x509',
      '/login/factors',
      '/account',
      '/',
      '/callback',
      '/demo.js',
      ...FACTOR_FORMS.keys(),
      ...ACCOUNT_FORMS,
      ...UPSTREAM_ROUTES.keys(),
      ...PASSKEY_PATHS,
    ],
    rest.templateOf,
  );

  /** One shared listener (no closure per request): path only, since query strings may carry secrets. */
  function logRequest(this: ServerResponse): void {
    const state = states.get(this.req);
    if (!state) return;
    const ms = Math.round((performance.now() - state.startedAt) * 100) / 100;
    logger.info(
      { reqId: state.id, ip: clientAddress(this.req), method: this.req.method, path: state.path, status: this.statusCode, ms },
      'request',
    );
  }

  /** One shared listener too: by route template, never by path; `aborted` when the client left before the answer. */
  function observeRequest(this: ServerResponse): void {
    const state = states.get(this.req);
    if (!state || !metrics) return;
    metrics.observeHttp(
      routeTemplate(state.path),
      this.writableFinished ? this.statusCode : 'aborted',
      (performance.now() - state.startedAt) / 1000,
    );
  }

  function graphql(req: IncomingMessage, res: ServerResponse): void {
    if (req.method === 'OPTIONS') return cors.preflight(req, res);
    cors.apply(req, res);
    // No GraphQL answer is stored by a shared cache (spec Authorization 14); one that depends on a credential
    // is private as well. (Public caching of @public GET queries belongs to the persisted-query layer.)
    if (req.headers.authorization) {
      res.setHeader('cache-control', 'private, no-store');
      res.setHeader('vary', 'Origin, Authorization');
    } else {
      res.setHeader('cache-control', 'no-store');
    }
    if (req.url!.length > limits.maxUrlBytes) {
      return sendGraphQLRequestError(
        req,
        res,
        414,
        ErrorCode.PAYLOAD_TOO_LARGE,
        `The request URL is longer than ${limits.maxUrlBytes} bytes: send the query by POST or as a persisted query.`,
      );
    }
    if (!acceptable(req, config.graphiql)) {
      return sendGraphQLRequestError(
        req,
        res,
        406,
        ErrorCode.BAD_REQUEST,
        'Accept must allow application/graphql-response+json or application/json.',
      );
    }
    if (req.method === 'GET') {
      // The GraphiQL page (a browser's GET): no script, style or request of any other origin.
      if (graphiql && req.headers.accept?.includes('text/html')) {
        void graphiql().then(
          (page) => {
            res.setHeader('content-security-policy', page.contentSecurityPolicy());
            return yoga(req, res);
          },
          (error: unknown) => {
            logger.error({ err: error }, 'the GraphiQL page could not be rendered');
            sendHttpError(res, 500, 'Internal Server Error');
          },
        );
        return;
      }
      void yoga(req, res);
      return;
    }
    if (req.method !== 'POST') {
      return sendGraphQLRequestError(req, res, 405, ErrorCode.METHOD_NOT_ALLOWED, 'GraphQL requests use GET (queries) or POST.', {
        allow: 'GET, POST, OPTIONS',
      });
    }
    // CSRF (spec Cross-site 2): only JSON bodies, which a cross-site form cannot send without a preflight.
    if (!acceptableContentType(req.headers['content-type'])) {
      return sendGraphQLRequestError(req, res, 415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'POST bodies must be application/json (UTF-8).', {
        accept: 'application/json',
      });
    }
    // Yoga matches content types case-sensitively and knows no graphql-response+json body: hand it the canonical form.
    req.headers['content-type'] = 'application/json';
    const declared = req.headers['content-length'];
    if (declared !== undefined) {
      if (Number(declared) > limits.maxBodyBytes) return tooLarge(req, res);
      // node:http never delivers more than Content-Length: Yoga may stream the body itself.
      void yoga(req, res);
      return;
    }
    // Chunked: count the bytes while reading, then hand Yoga the buffered body.
    readBody(req, limits.maxBodyBytes).then(
      (body) => {
        // @whatwg-node/server uses a pre-read body instead of the (now consumed) stream.
        (req as IncomingMessage & { body?: Buffer }).body = body;
        void yoga(req, res);
      },
      (error: unknown) => {
        if (error instanceof BodyTooLargeError) return tooLarge(req, res);
        logger.debug({ reqId: states.get(req)?.id, err: error }, 'request body aborted');
        if (!res.headersSent) sendHttpError(res, 400, 'The request body could not be read.');
      },
    );
  }

  function api(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (req.method === 'OPTIONS') return cors.preflight(req, res);
    cors.apply(req, res);
    // Record-level answers depend on the caller: never stored by a shared cache (spec Authorization 14).
    res.setHeader('cache-control', req.headers.authorization ? 'private, no-store' : 'no-store');
    res.setHeader('vary', 'Origin, Authorization');
    if (req.url!.length > limits.maxUrlBytes) return sendHttpError(res, 414, 'URI Too Long');
    const query = req.url!.indexOf('?');
    void rest(req, res, path, new URLSearchParams(query < 0 ? '' : req.url!.slice(query + 1)));
  }

  function passkeyRoute(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (!passkeys) return sendHttpError(res, 404, 'Passkeys are not configured on this server (set RP_ID).');
    if (req.method !== 'POST') return sendHttpError(res, 405, 'Method Not Allowed', { allow: 'POST' });
    const handler = {
      '/webauthn/register/options': passkeys.registerOptions,
      '/webauthn/register': passkeys.register,
      '/webauthn/authenticate/options': passkeys.authenticateOptions,
      '/login/webauthn': passkeys.signIn,
    }[path]!;
    handler(req, res).catch((error: unknown) => failed(req, res, error, 'passkey route failed'));
  }

  /**
   * What escapes a login or passkey route: a data store that is down or too slow is SERVICE_UNAVAILABLE (503 with
   * Retry-After); anything else is a masked 500 and an error log line.
   */
  function failed(req: IncomingMessage, res: ServerResponse, error: unknown, what: string): void {
    if (isDatabaseUnavailable(error)) {
      logger.warn({ reqId: states.get(req)?.id, reason: (error as Error).message }, `${what}: data store unavailable`);
      if (!res.headersSent) sendServiceUnavailable(res);
      return;
    }
    logger.error({ reqId: states.get(req)?.id, err: error }, what);
    if (!res.headersSent) sendHttpError(res, 500, 'Internal server error.');
  }

  function loginRoute(req: IncomingMessage, res: ServerResponse, path: string): void {
    const fail = (error: unknown) => failed(req, res, error, 'login route failed');
    if (path === '/ott/generate') {
      if (req.method !== 'POST') return sendHttpError(res, 405, 'Method Not Allowed', { allow: 'POST' });
      return void login.generate(req, res).catch(fail);
    }
    if (path === '/login/ott') {
      if (req.method === 'GET' || req.method === 'HEAD') return login.tokenPage(req, res);
      if (req.method !== 'POST') return sendHttpError(res, 405, 'Method Not Allowed', { allow: 'GET, HEAD, POST' });
      return void login.consume(req, res).catch(fail);
    }
    if (path === '/login') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendHttpError(res, 405, 'Method Not Allowed', { allow: 'GET, HEAD' });
      return login.standaloneSignIn(req, res);
    }
    if (path === '/login/x509') return void clientCertificates.route(req, res).catch(fail);
    if (path === '/login/factors') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendHttpError(res, 405, 'Method Not Allowed', { allow: 'GET, HEAD' });
      return void factorPages.factorsPage(req, res).catch(fail);
    }
    const factorFormName = FACTOR_FORMS.get(path);
    const factorForm = factorFormName ? factorPages[factorFormName] : undefined;
    if (factorForm) {
      if (req.method !== 'POST') return sendHttpError(res, 405, 'Method Not Allowed', { allow: 'POST' });
      return void factorForm(req, res).catch(fail);
    }
    const upstreamRoute = UPSTREAM_ROUTES.get(path);
    if (upstreamRoute) {
      if (!upstream) return sendHttpError(res, 404, 'No upstream OpenID provider is configured on this server (set UPSTREAM_ISSUER).');
      if (req.method !== upstreamRoute[0]) return sendHttpError(res, 405, 'Method Not Allowed', { allow: upstreamRoute[0] });
      return void upstream[upstreamRoute[1]](req, res).catch(fail);
    }
    if (path === '/account') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendHttpError(res, 405, 'Method Not Allowed', { allow: 'GET, HEAD' });
      return void account.accountPage(req, res).catch(fail);
    }
    if (ACCOUNT_FORMS.has(path)) {
      if (req.method !== 'POST') return sendHttpError(res, 405, 'Method Not Allowed', { allow: 'POST' });
      const form = {
        '/account/passkeys/rename': account.renamePasskeyForm,
        '/account/passkeys/remove': account.removePasskeyForm,
        '/account/totp/setup': account.totpSetupForm,
        '/account/totp/confirm': account.totpConfirmForm,
        '/account/totp/remove': account.totpRemoveForm,
        '/account/recovery-codes': account.recoveryCodesForm,
        '/account/devices/forget': account.forgetDeviceForm,
        '/account/password': account.setPasswordForm,
        '/account/password/remove': account.removePasswordForm,
      }[path]!;
      return void form(req, res).catch(fail);
    }
    const uid = /^\/interaction\/([A-Za-z0-9_-]{1,64})$/.exec(path)?.[1];
    if (!uid) return sendHttpError(res, 404, 'Not Found');
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendHttpError(res, 405, 'Method Not Allowed', { allow: 'GET, HEAD' });
    return void login.interaction(req, res, uid).catch(fail);
  }

  function tooLarge(req: IncomingMessage, res: ServerResponse): void {
    // Closing the connection stops the client from streaming the rest of an oversized body.
    sendGraphQLRequestError(req, res, 413, ErrorCode.PAYLOAD_TOO_LARGE, `The request body is larger than ${limits.maxBodyBytes} bytes.`, {
      connection: 'close',
    });
  }

  /** Set once shutdown begins: readiness fails at once and every response closes its connection. */
  let draining = false;

  /** `/healthz` and `/readyz`, answered alike by every listener (the metrics listener included). */
  const probes = {
    health(res: ServerResponse): void {
      sendJson(res, 200, { status: 'ok' });
    },
    /** Ready to take traffic: not shutting down, and the database answers. */
    async readiness(res: ServerResponse): Promise<void> {
      if (draining) return sendHttpError(res, 503, 'The service is shutting down.');
      if (await database.ping(1000)) sendJson(res, 200, { status: 'ok', database: database.kind });
      else sendHttpError(res, 503, 'The database is unreachable.');
    },
  };

  // In development a page opened at another host than PUBLIC_URL's (127.0.0.1 for localhost, say) moves there
  // first: cookies, passkeys (the relying party) and the links in messages all belong to PUBLIC_URL, so a sign-in
  // started elsewhere would end on the wrong host.
  const redirectPagesToPublicUrl = config.env === 'development';
  const publicHost = new URL(config.http.publicUrl).host;
  const isPage = (path: string) => path === '/' || path === '/account' || path === '/login' || path.startsWith('/login/');
  function redirectToPublicUrl(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(307, { location: `${config.http.publicUrl}${req.url ?? '/'}`, 'content-length': 0 });
    res.end();
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const path = pathOf(req.url ?? '/');
    states.set(req, { id: requestId, path, startedAt: timeRequests ? performance.now() : 0 });
    res.setHeader('x-request-id', requestId);
    res.setHeader('x-content-type-options', 'nosniff');
    // Shutting down: the client's next request goes to another instance (node closes after this response).
    if (draining) res.setHeader('connection', 'close');
    if (logRequests) res.once('finish', logRequest);
    // 'close' comes once, after 'finish' or when the connection is lost first: `on` needs no wrapper per request.
    if (metrics) res.on('close', observeRequest);
    if (path === '/graphql') return graphql(req, res);
    if (path.startsWith('/api/')) return api(req, res, path);
    if (redirectPagesToPublicUrl && isPage(path) && req.headers.host !== publicHost && (req.method === 'GET' || req.method === 'HEAD')) {
      return redirectToPublicUrl(req, res);
    }
    // Every route below may reach the provider (its endpoints, its session and interactions): it sees only the
    // forwarded headers a trusted proxy's word allows, rewritten (X-Forwarded-Host never).
    clientAddresses.forProvider(req);
    if (path === '/.well-known/openid-configuration') return void oidc(req, res);
    // The authorization server's routes: one deadline per request for their database work. They find it through
    // AsyncLocalStorage (the provider runs on one already, for every request it serves); the API's own paths
    // (GraphQL, REST) pass theirs explicitly and keep AsyncLocalStorage off their hot path.
    if (path.startsWith('/oidc/')) {
      // Every provider endpoint reads its sessions and grants from the database: during a known outage, at once.
      if (!database.health.available) return sendServiceUnavailable(res, 'Sign-in is unavailable. Try again shortly.');
      return void withDatabaseDeadline(performance.now() + config.database.timeoutMs, () => oidc(req, res));
    }
    if (PASSKEY_PATHS.has(path))
      return withDatabaseDeadline(performance.now() + config.database.timeoutMs, () => passkeyRoute(req, res, path));
    if (
      path === '/ott/generate' ||
      path === '/login' ||
      path.startsWith('/login/') ||
      path.startsWith('/interaction/') ||
      path === '/account' ||
      ACCOUNT_FORMS.has(path)
    ) {
      return withDatabaseDeadline(performance.now() + config.database.timeoutMs, () => loginRoute(req, res, path));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return KNOWN_GET_ROUTES.has(path)
        ? sendHttpError(res, 405, 'Method Not Allowed', { allow: 'GET, HEAD' })
        : sendHttpError(res, 404, 'Not Found');
    }
    if (demo && (path === '/' || path === '/callback')) return demo.sendPage(req, res);
    if (demo && path === '/demo.js') return demo.sendScript(req, res);
    if (demo && path.startsWith('/client/') && demo.sendClientModule(req, res, path)) return;
    switch (path) {
      case '/healthz':
        return probes.health(res);
      case '/readyz':
        void probes.readiness(res);
        return;
      case '/.well-known/jwks.json':
        res.writeHead(200, { 'content-type': 'application/jwk-set+json; charset=utf-8', 'cache-control': 'public, max-age=300' });
        res.end(jwksBody);
        return;
      default:
        return sendHttpError(res, 404, 'Not Found');
    }
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

  return {
    handle,
    upgrade,
    /** shutdown began: /readyz answers 503 on every listener, responses carry `Connection: close` */
    drain: () => void (draining = true),
    probes,
    closeWebSockets: webSocket.close,
    terminateWebSockets: webSocket.terminate,
    webSocketClients: webSocket.clients,
    yoga,
    verifier,
    provider,
  };
}

export type HttpApp = Awaited<ReturnType<typeof createHttpApp>>;
