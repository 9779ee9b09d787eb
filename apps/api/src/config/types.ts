import type { ClientCertificateUsers, SignInFactor, SignInPolicy } from '@latchkey/auth/configuration';
import type { TrustProxy } from '@latchkey/http';
import type { BudgetSettings } from './budget.js';
import type { ServiceRegistration } from './services.js';

export interface Config {
  env: 'development' | 'production' | 'test';
  service: { name: string; version: string };
  http: {
    port: number;
    host: string;
    publicUrl: string;
    corsOrigins: ReadonlySet<string>;
    /** the HTTPS listener (TLS_PORT): PEM certificate chain and key, client-certificate authorities */
    tls: { port: number; cert: string; key: string; clientCa: string | undefined } | undefined;
    /** the reverse proxies whose forwarded headers are believed (TRUST_PROXY); undefined: nobody's */
    trustProxy: TrustProxy | undefined;
  };
  /** graceful shutdown (SIGTERM, SIGINT): accept for `delayMs` after readiness turned 503, exit within `timeoutMs` */
  shutdown: { delayMs: number; timeoutMs: number };
  dataDir: string;
  /** `timeoutMs`: DATABASE_TIMEOUT, the deadline of a request's database work (PostgreSQL, Redis) */
  database: { url: string | undefined; poolSize: number; timeoutMs: number };
  redisUrl: string | undefined;
  logLevel: string;
  keys: {
    /** private key as JWK JSON or PKCS#8 PEM; undefined = development key under dataDir */
    signingKey: string | undefined;
    /** extra public keys (JWKS JSON) accepted during rotation */
    verifyKeys: string | undefined;
  };
  tokens: {
    issuer: string;
    /** API_AUDIENCE, PUBLIC_URL by default: the `aud` of every access token issued for the API */
    audience: string;
    /** the audiences the API accepts: `audience`, and the legacy `urn:latchkey:api` while API_AUDIENCE is unset */
    acceptedAudiences: readonly string[];
    /** the API's resource identifier (RFC 9728): PUBLIC_URL */
    resourceIdentifier: string;
    clockSkewSeconds: number;
    accessTokenTtlSeconds: number;
    cacheSize: number;
    /** DPOP_PROOF_MAX_AGE: how old a DPoP proof may be, in seconds */
    dpopProofMaxAgeSeconds: number;
  };
  limits: {
    maxBodyBytes: number;
    maxUrlBytes: number;
    maxBatch: number;
    maxDepth: number;
    maxAliases: number;
    maxTokens: number;
    maxDirectives: number;
    maxCost: number;
    defaultListSize: number;
  };
  graphiql: boolean;
  introspection: 'open' | 'signed-in' | 'off';
  persisted: {
    mode: 'apq' | 'allowlist' | 'off';
    /** the manifest text of PERSISTED_ALLOWLIST_FILE, read at start-up */
    allowlist: { file: string; text: string } | undefined;
    cacheSize: number;
    maxRegistrations: number;
    registrationsPerMinute: number;
  };
  /** fair-use cost budgets per caller (API_BUDGET; bucket sizes from API_BUDGET_FILE, else DEFAULT_BUDGETS) */
  budget: BudgetSettings;
  /** seconds a shared cache may keep a public GET answer; 0: every answer is no-store */
  publicCacheMaxAge: number;
  observability: {
    /** the metrics listener's port (METRICS_PORT, on HOST); undefined: no metrics are kept */
    metricsPort: number | undefined;
    /** OpenTelemetry traces: where spans go (OTLP/HTTP) and under which service name; undefined: none */
    tracing: { tracesUrl: string; serviceName: string } | undefined;
  };
  /** the audit trail: seconds an event is kept (AUDIT_RETENTION) */
  audit: { retentionSeconds: number };
  subscriptions: {
    perUser: number;
    perConnection: number;
    /** events waiting for one subscriber before it is dropped as too slow */
    queueSize: number;
    /** seconds an event stays in the outbox table (EVENT_RETENTION) */
    eventRetentionSeconds: number;
    wsMaxMessageBytes: number;
  };
  auth: {
    /** sign-in mail: SMTP server URL (unset: the development outbox) and From address */
    smtpUrl: string | undefined;
    mailFrom: string;
    webhook: { url: string; secret: string } | undefined;
    /** unknown addresses asking for a link get an account */
    selfSignup: boolean;
    /** a sign-in link signs in only the browser that asked for it (BIND_LINKS_TO_BROWSER) */
    bindLinksToBrowser: boolean;
    /** whether accounts may have a password, asked for as a later step of a sign-in (PASSWORDS) */
    passwords: boolean;
    /** the WebAuthn relying party; undefined when PUBLIC_URL is an IP address and RP_ID is unset (no passkeys) */
    relyingParty: { id: string; name: string; origins: string[] } | undefined;
    /** OpenID clients: OIDC_CLIENTS plus, when enabled, the demo client */
    clients: OidcClient[];
    /** clients whose consent is implicit */
    firstPartyClientIds: string[];
    /** clients that may introspect any API access token (`resource_server: true`) */
    resourceServerClientIds: string[];
    /** the services (`client_credentials`): each one's organization, role and scopes (services.ts) */
    services: ServiceRegistration[];
    /** the demo page's client id, when the demo client is on */
    demoClientId: string | undefined;
    /** whether the provider's outgoing requests (back-channel logout) may reach loopback and private addresses */
    privateNetworkFetch: boolean;
    /** multi-factor rules and acr levels (AUTH_POLICY_FILE; default: no rules, the default levels) */
    signInPolicy: SignInPolicy;
    /** the sign-in factors this server knows (each offered when its settings say so: `signInPolicy.contributed`) */
    factors: readonly SignInFactor[];
    /** the upstream OpenID provider (UPSTREAM_ISSUER, UPSTREAM_CLIENT_ID, UPSTREAM_CLIENT_SECRET, UPSTREAM_NAME) */
    upstream: { issuer: string; clientId: string; clientSecret: string; name: string } | undefined;
    /** who client certificates sign in (X509_USERS_FILE); set only with the TLS listener and TLS_CLIENT_CA_FILE */
    clientCertificates: ClientCertificateUsers | undefined;
  };
}

/** An OpenID client as configured (oidc-provider client metadata, snake_case). */
export interface OidcClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  post_logout_redirect_uris?: string[];
  grant_types?: string[];
  response_types?: string[];
  token_endpoint_auth_method?: string;
  /** consent is implicit (our own applications) */
  first_party?: boolean;
  /** a back-end that checks API tokens: it may introspect any of them, not only those issued to it */
  resource_server?: boolean;
  [other: string]: unknown;
}

export interface ConfigSources {
  env: Record<string, string | undefined>;
  /** the sign-in factors this server knows. @default SIGN_IN_FACTORS (the registry of @latchkey/auth) */
  factors?: readonly SignInFactor[];
  /** reads SIGNING_KEY_FILE; injected so tests need no files */
  readFile?: (file: string) => string;
  version?: string;
}
