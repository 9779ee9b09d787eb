import { createPrivateKey, X509Certificate } from 'node:crypto';
import path from 'node:path';
import { OFFERED_GRANT_TYPES, OFFERED_RESPONSE_TYPES, type Factor, type SignInPolicy } from '@latchkey/auth/configuration';
import ipaddr from 'ipaddr.js';
import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { normalizeFingerprint, parseDistinguishedName, subjectKey, type ClientCertificateUsers } from './login/certificate-subjects.js';
import { loadSignInPolicy, SignInPolicyError } from './sign-in-policy-config.js';

/**
 * All configuration is read and validated here, once, at start-up; everything else receives
 * the resulting `Config` object (nothing below this file reads `process.env`).
 */

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off']).transform((v) => ['true', '1', 'yes', 'on'].includes(v));

const positiveInt = (max: number) => z.coerce.number().int().positive().max(max);

const durationPattern = /^(\d+)\s*(ms|s|m|h|d)?$/;
/** Parses "600", "600s", "10m", "1h" into milliseconds ("250ms" too). */
export function parseDurationMs(value: string): number {
  const match = durationPattern.exec(value.trim());
  if (!match) throw new ConfigError(`invalid duration "${value}" (use e.g. 500ms, 30s, 10m, 1h)`);
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 's'] ?? 1000;
  return Number(match[1]) * factor;
}
/** Parses "600", "600s", "10m", "1h" into whole seconds. */
export function parseDurationSeconds(value: string): number {
  return Math.round(parseDurationMs(value) / 1000);
}
const durationIn = (parse: (value: string) => number) =>
  z.string().transform((v, ctx) => {
    try {
      return parse(v);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });
const duration = durationIn(parseDurationSeconds);
/** For timeouts that need sub-second precision. */
const durationMs = durationIn(parseDurationMs);

const origin = z.string().transform((value, ctx) => {
  try {
    const url = new URL(value);
    if (url.origin === 'null') throw new Error('opaque origin');
    return url.origin;
  } catch {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not an origin such as https://app.example.com` });
    return z.NEVER;
  }
});

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_URL: z.url().optional(),
  /** the reverse proxies whose forwarded headers are believed: addresses, CIDRs, loopback, linklocal, uniquelocal */
  TRUST_PROXY: z.string().optional(),
  /** which forwarded headers those proxies send: X-Forwarded-For/-Proto, or RFC 7239 Forwarded */
  TRUST_PROXY_HEADER: z.enum(['x-forwarded', 'forwarded']).optional(),
  DATA_DIR: z.string().min(1).default('.data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(200).default(10),
  /** one deadline per request for everything it asks the database (pool wait and every statement) */
  DATABASE_TIMEOUT: durationMs.pipe(z.number().min(100, 'must be at least 100ms').max(600_000, 'must be at most 10m')).default(5000),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  CORS_ORIGINS: z.string().optional(),
  /** JSON array of OpenID client metadata (client_id, redirect_uris, token_endpoint_auth_method, ...) */
  OIDC_CLIENTS: z.string().optional(),
  /** the first-party public client of the demo page at / (default: on outside production) */
  OIDC_DEMO_CLIENT: bool.optional(),
  /** smtp:// or smtps:// URL of the mail server that delivers sign-in links */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).max(200).default('Latchkey <login@localhost>'),
  /** sign-in messages POSTed as signed JSON (SMS gateways and other channels), when SMTP_URL is unset */
  DELIVERY_WEBHOOK_URL: z.url().optional(),
  DELIVERY_WEBHOOK_SECRET: z.string().min(32, 'must have at least 32 characters').optional(),
  /** unknown addresses get an account (e-mail unverified) when they ask for a link. Off by default. */
  SELF_SIGNUP: bool.default(false),
  /** passwords as an optional second step (set on the account page, asked on the factor pages) */
  PASSWORDS: bool.default(true),
  /** WebAuthn relying party: its ID (registrable domain; `localhost` locally, never an IP), name, origins */
  RP_ID: z
    .string()
    .regex(/^[a-z0-9.-]+$/i, 'must be a domain name such as example.com or localhost')
    .optional(),
  RP_NAME: z.string().min(1).max(100).default('Latchkey'),
  WEBAUTHN_ORIGINS: z.string().optional(),
  AUTH_POLICY_FILE: z.string().optional(),
  /** the optional HTTPS listener (same application) on HOST:TLS_PORT, its certificate and key (PEM files) */
  TLS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  TLS_CERT_FILE: z.string().min(1).optional(),
  TLS_KEY_FILE: z.string().min(1).optional(),
  /** PEM bundle of the authorities whose client certificates the TLS listener accepts */
  TLS_CLIENT_CA_FILE: z.string().min(1).optional(),
  /** JSON file mapping client certificates (fingerprint or subject) to accounts (e-mail) */
  X509_USERS_FILE: z.string().min(1).optional(),

  /** an upstream OpenID provider to sign in through (factor AUTHORIZATION_CODE): issuer URL, client, button name */
  UPSTREAM_ISSUER: z.string().min(1).max(2048).optional(),
  UPSTREAM_CLIENT_ID: z.string().min(1).max(255).optional(),
  UPSTREAM_CLIENT_SECRET: z.string().min(1).max(1024).optional(),
  UPSTREAM_NAME: z.string().trim().min(1).max(60).optional(),

  SIGNING_KEY: z.string().min(1).optional(),
  SIGNING_KEY_FILE: z.string().min(1).optional(),
  VERIFY_KEYS: z.string().min(1).optional(),
  JWT_ISSUER: z.string().min(1).optional(),
  API_AUDIENCE: z.string().min(1).default('urn:latchkey:api'),
  JWT_CLOCK_SKEW: duration.default(30),
  ACCESS_TOKEN_TTL: duration.pipe(z.number().int().min(1, 'must be at least 1s')).default(600),
  TOKEN_CACHE_SIZE: z.coerce.number().int().min(0).max(1_000_000).default(10_000),

  MAX_BODY_BYTES: positiveInt(64 * 1024 * 1024).default(1024 * 1024),
  MAX_URL_BYTES: positiveInt(64 * 1024).default(8192),
  MAX_BATCH: z.coerce.number().int().min(0).max(1000).default(10),
  MAX_DEPTH: positiveInt(1000).default(15),
  MAX_ALIASES: positiveInt(10_000).default(30),
  MAX_TOKENS: positiveInt(1_000_000).default(5000),
  MAX_DIRECTIVES: positiveInt(10_000).default(20),
  MAX_COST: positiveInt(10_000_000).default(5000),
  DEFAULT_LIST_SIZE: positiveInt(10_000).default(10),

  GRAPHIQL: bool.optional(),

  /** on SIGTERM/SIGINT: how long the listener keeps accepting after /readyz turned 503, and the whole budget */
  SHUTDOWN_DELAY: durationMs.pipe(z.number().max(600_000, 'must be at most 10m')).default(0),
  SHUTDOWN_TIMEOUT: durationMs.pipe(z.number().min(1000, 'must be at least 1s').max(3_600_000, 'must be at most 1h')).default(10_000),

  /** persisted operations: apq (automatic persisted queries), allowlist (trusted documents only) or off */
  PERSISTED_MODE: z.enum(['apq', 'allowlist', 'off']).default('apq'),
  /** a persisted-documents manifest (the client codegen's) imported as the allowlist at start-up */
  PERSISTED_ALLOWLIST_FILE: z.string().min(1).optional(),
  /** persisted operations held parsed and validated in each process */
  PERSISTED_CACHE_SIZE: positiveInt(1_000_000).default(1000),
  /** APQ registrations kept in the database (least recently used beyond it are deleted) */
  PERSISTED_MAX_REGISTRATIONS: positiveInt(10_000_000).default(10_000),
  /** new APQ registrations per client address and minute */
  PERSISTED_REGISTRATIONS_PER_MINUTE: positiveInt(100_000).default(30),
  /** open subscriptions per account on one instance, per WebSocket connection, and events queued per subscriber */
  SUBSCRIPTIONS_PER_USER: positiveInt(10_000).default(20),
  SUBSCRIPTIONS_PER_CONNECTION: positiveInt(1000).default(10),
  SUBSCRIPTION_QUEUE_SIZE: positiveInt(100_000).default(64),
  /** how long document events stay in the outbox table: an instance cut off for longer loses them */
  EVENT_RETENTION: duration.pipe(z.number().int().min(1, 'must be at least 1s')).default(600),
  /** the largest WebSocket message a client may send */
  WS_MAX_MESSAGE_BYTES: positiveInt(16 * 1024 * 1024).default(64 * 1024),
  /** max-age of publicly cacheable GET answers (operations of @public fields only, no credentials); 0: never */
  PUBLIC_CACHE_MAX_AGE: z.coerce.number().int().min(0).max(31_536_000).default(60),
  INTROSPECTION: z.enum(['open', 'signed-in', 'off']).optional(),

  /** Prometheus metrics (and /healthz, /readyz) on a listener of their own, HOST:METRICS_PORT; unset: no metrics */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** OTLP/HTTP collector base URL (traces go to <url>/v1/traces); unset: no traces */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  /** the service.name of exported spans */
  OTEL_SERVICE_NAME: z.string().trim().min(1).max(100).default('latchkey'),
});

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
    audience: string;
    clockSkewSeconds: number;
    accessTokenTtlSeconds: number;
    cacheSize: number;
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
  /** seconds a shared cache may keep a public GET answer; 0: every answer is no-store */
  publicCacheMaxAge: number;
  observability: {
    /** the metrics listener's port (METRICS_PORT, on HOST); undefined: no metrics are kept */
    metricsPort: number | undefined;
    /** OpenTelemetry traces: where spans go (OTLP/HTTP) and under which service name; undefined: none */
    tracing: { tracesUrl: string; serviceName: string } | undefined;
  };
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
    /** whether accounts may have a password, asked for as a later step of a sign-in (PASSWORDS) */
    passwords: boolean;
    /** the WebAuthn relying party; undefined when PUBLIC_URL is an IP address and RP_ID is unset (no passkeys) */
    relyingParty: { id: string; name: string; origins: string[] } | undefined;
    /** OpenID clients: OIDC_CLIENTS plus, when enabled, the demo client */
    clients: OidcClient[];
    /** clients whose consent is implicit */
    firstPartyClientIds: string[];
    /** the demo page's client id, when the demo client is on */
    demoClientId: string | undefined;
    /** multi-factor rules and acr levels (AUTH_POLICY_FILE; default: no rules, the default levels) */
    signInPolicy: SignInPolicy;
    /** the upstream OpenID provider (UPSTREAM_ISSUER, UPSTREAM_CLIENT_ID, UPSTREAM_CLIENT_SECRET, UPSTREAM_NAME) */
    upstream: { issuer: string; clientId: string; clientSecret: string; name: string } | undefined;
    /** who client certificates sign in (X509_USERS_FILE); set only with the TLS listener and TLS_CLIENT_CA_FILE */
    clientCertificates: ClientCertificateUsers | undefined;
  };
}

/** TRUST_PROXY as proxy-addr entries, and which header carries the chain (TRUST_PROXY_HEADER). */
export interface TrustProxy {
  addresses: string[];
  header: 'x-forwarded' | 'forwarded';
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
  [other: string]: unknown;
}

const oidcClients = z.array(
  z
    .object({
      client_id: z.string().min(1).max(100),
      client_secret: z.string().min(32).optional(),
      redirect_uris: z.array(z.url()).min(1),
      post_logout_redirect_uris: z.array(z.url()).optional(),
      // Only authorization code with PKCE is offered (RFC 9700): asking for anything else stops start-up.
      grant_types: z
        .array(z.enum(OFFERED_GRANT_TYPES, { error: `only ${OFFERED_GRANT_TYPES.map((type) => `"${type}"`).join(' and ')} are offered` }))
        .optional(),
      response_types: z
        .array(
          z.enum(OFFERED_RESPONSE_TYPES, {
            error: `only ${OFFERED_RESPONSE_TYPES.map((type) => `"${type}"`).join(', ')} is offered (authorization code with PKCE)`,
          }),
        )
        .optional(),
      token_endpoint_auth_method: z.string().optional(),
      first_party: z.boolean().optional(),
    })
    .loose(),
);

export const DEMO_CLIENT_ID = 'latchkey-demo';

function parseClients(raw: string | undefined): OidcClient[] {
  if (!raw) return [];
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ConfigError('invalid configuration:\n  OIDC_CLIENTS: not valid JSON (a JSON array of client metadata)');
  }
  const result = oidcClients.safeParse(json);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  OIDC_CLIENTS.${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data as OidcClient[];
}

export interface ConfigSources {
  env: Record<string, string | undefined>;
  /** reads SIGNING_KEY_FILE; injected so tests need no files */
  readFile?: (file: string) => string;
  version?: string;
}

export function loadConfig({ env, readFile, version = '0.0.0' }: ConfigSources): Config {
  // Empty strings mean "unset": docker-compose and shells often export VAR= .
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');

  let signingKey = e.SIGNING_KEY;
  if (!signingKey && e.SIGNING_KEY_FILE) {
    if (!readFile) throw new ConfigError('SIGNING_KEY_FILE is set but files cannot be read here');
    try {
      signingKey = readFile(e.SIGNING_KEY_FILE);
    } catch {
      throw new ConfigError(`SIGNING_KEY_FILE: cannot read ${e.SIGNING_KEY_FILE}`);
    }
  }
  if (production && !signingKey) {
    throw new ConfigError(
      'SIGNING_KEY (or SIGNING_KEY_FILE) is required when NODE_ENV=production: a private JWK or PKCS#8 PEM ' +
        '(create one with `pnpm latchkey keygen`). Development keys are never generated in production.',
    );
  }

  const corsOrigins = new Set<string>();
  const rawOrigins = e.CORS_ORIGINS ?? (production ? '' : new URL(publicUrl).origin);
  for (const item of rawOrigins
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const result = origin.safeParse(item);
    if (!result.success) throw new ConfigError(`invalid configuration:\n  CORS_ORIGINS: ${result.error.issues[0]?.message}`);
    corsOrigins.add(result.data);
  }

  const relyingParty = relyingPartyConfig(e.RP_ID, e.RP_NAME, e.WEBAUTHN_ORIGINS, publicUrl);
  const { tls, clientCertificates } = tlsConfig(e, readFile);
  const upstream = upstreamConfig(e);
  const signInPolicy = signInPolicyConfig(e.AUTH_POLICY_FILE, readFile, {
    passkeys: relyingParty !== undefined,
    clientCertificates: clientCertificates !== undefined,
    upstream: upstream !== undefined,
    passwords: e.PASSWORDS,
  });

  return {
    env: e.NODE_ENV,
    service: { name: 'latchkey', version },
    http: { port: e.PORT, host: e.HOST, publicUrl, corsOrigins, tls, trustProxy: trustProxyConfig(e.TRUST_PROXY, e.TRUST_PROXY_HEADER) },
    shutdown: shutdownConfig(e.SHUTDOWN_DELAY, e.SHUTDOWN_TIMEOUT),
    dataDir: path.resolve(e.DATA_DIR),
    database: { url: e.DATABASE_URL, poolSize: e.DATABASE_POOL_SIZE, timeoutMs: e.DATABASE_TIMEOUT },
    redisUrl: e.REDIS_URL,
    logLevel: e.LOG_LEVEL,
    keys: { signingKey, verifyKeys: e.VERIFY_KEYS },
    tokens: {
      issuer: e.JWT_ISSUER ?? publicUrl,
      audience: e.API_AUDIENCE,
      clockSkewSeconds: e.JWT_CLOCK_SKEW,
      accessTokenTtlSeconds: e.ACCESS_TOKEN_TTL,
      cacheSize: e.TOKEN_CACHE_SIZE,
    },
    limits: {
      maxBodyBytes: e.MAX_BODY_BYTES,
      maxUrlBytes: e.MAX_URL_BYTES,
      maxBatch: e.MAX_BATCH,
      maxDepth: e.MAX_DEPTH,
      maxAliases: e.MAX_ALIASES,
      maxTokens: e.MAX_TOKENS,
      maxDirectives: e.MAX_DIRECTIVES,
      maxCost: e.MAX_COST,
      defaultListSize: e.DEFAULT_LIST_SIZE,
    },
    graphiql: e.GRAPHIQL ?? !production,
    persisted: {
      mode: e.PERSISTED_MODE,
      allowlist: e.PERSISTED_ALLOWLIST_FILE
        ? { file: e.PERSISTED_ALLOWLIST_FILE, text: readConfigFile('PERSISTED_ALLOWLIST_FILE', e.PERSISTED_ALLOWLIST_FILE, readFile) }
        : undefined,
      cacheSize: e.PERSISTED_CACHE_SIZE,
      maxRegistrations: e.PERSISTED_MAX_REGISTRATIONS,
      registrationsPerMinute: e.PERSISTED_REGISTRATIONS_PER_MINUTE,
    },
    publicCacheMaxAge: e.PUBLIC_CACHE_MAX_AGE,
    observability: observabilityConfig(e),
    subscriptions: {
      perUser: e.SUBSCRIPTIONS_PER_USER,
      perConnection: e.SUBSCRIPTIONS_PER_CONNECTION,
      queueSize: e.SUBSCRIPTION_QUEUE_SIZE,
      eventRetentionSeconds: e.EVENT_RETENTION,
      wsMaxMessageBytes: e.WS_MAX_MESSAGE_BYTES,
    },
    introspection: e.INTROSPECTION ?? (production ? 'signed-in' : 'open'),
    auth: {
      smtpUrl: e.SMTP_URL,
      mailFrom: e.MAIL_FROM,
      webhook: webhookConfig(e.DELIVERY_WEBHOOK_URL, e.DELIVERY_WEBHOOK_SECRET),
      selfSignup: e.SELF_SIGNUP,
      passwords: e.PASSWORDS,
      relyingParty,
      signInPolicy,
      upstream,
      clientCertificates,
      ...authConfig(parseClients(e.OIDC_CLIENTS), e.OIDC_DEMO_CLIENT ?? !production, publicUrl),
    },
  };
}

/**
 * The factors this server verifies today: one-time tokens, TOTP and recovery codes always, passkeys when a
 * relying party is configured, client certificates when the TLS listener verifies them and maps them to
 * accounts (TLS_PORT, TLS_CLIENT_CA_FILE, X509_USERS_FILE), an upstream OpenID provider when one is configured
 * (UPSTREAM_ISSUER), passwords unless PASSWORDS is off.
 */
interface OfferedFactors {
  passkeys: boolean;
  clientCertificates: boolean;
  upstream: boolean;
  passwords: boolean;
}

function contributedFactors({ passkeys, clientCertificates, upstream, passwords }: OfferedFactors): Set<Factor> {
  return new Set<Factor>([
    'OTT',
    'TOTP',
    'RECOVERY_CODE',
    ...(passwords ? (['PASSWORD'] as const) : []),
    ...(passkeys ? (['WEBAUTHN'] as const) : []),
    ...(clientCertificates ? (['X509'] as const) : []),
    ...(upstream ? (['AUTHORIZATION_CODE'] as const) : []),
  ]);
}

function signInPolicyConfig(file: string | undefined, readFile: ConfigSources['readFile'], offered: OfferedFactors): SignInPolicy {
  let text: string | undefined;
  if (file) {
    if (!readFile) throw new ConfigError('AUTH_POLICY_FILE is set but files cannot be read here');
    try {
      text = readFile(file);
    } catch {
      throw new ConfigError(`AUTH_POLICY_FILE: cannot read ${file}`);
    }
  }
  try {
    return loadSignInPolicy(text, contributedFactors(offered));
  } catch (error) {
    if (error instanceof SignInPolicyError) throw new ConfigError(`invalid configuration:\n  ${error.message}`);
    throw error;
  }
}

function relyingPartyConfig(
  id: string | undefined,
  name: string,
  rawOrigins: string | undefined,
  publicUrl: string,
): Config['auth']['relyingParty'] {
  const rpId = (id ?? new URL(publicUrl).hostname).toLowerCase();
  const isIp = /^\d+\.\d+\.\d+\.\d+$/.test(rpId) || rpId.includes(':') || rpId.startsWith('[');
  // Derived from an IP-address PUBLIC_URL: passkeys are simply unavailable; named explicitly: a mistake.
  if (isIp && id === undefined) return undefined;
  if (isIp) {
    throw new ConfigError('invalid configuration:\n  RP_ID: an IP address is not a valid WebAuthn RP ID (use localhost or a domain name)');
  }
  const origins = new Set<string>();
  for (const item of (rawOrigins ?? new URL(publicUrl).origin)
    .split(',')
    .map((value) => value.trim())
    .filter(Boolean)) {
    const result = origin.safeParse(item);
    if (!result.success) throw new ConfigError(`invalid configuration:\n  WEBAUTHN_ORIGINS: ${result.error.issues[0]?.message}`);
    const host = new URL(result.data).hostname;
    if (host !== rpId && !host.endsWith(`.${rpId}`)) {
      throw new ConfigError(`invalid configuration:\n  WEBAUTHN_ORIGINS: ${result.data} is not on the RP ID ${rpId} or a subdomain of it`);
    }
    origins.add(result.data);
  }
  return { id: rpId, name, origins: [...origins] };
}

function shutdownConfig(delayMs: number, timeoutMs: number): Config['shutdown'] {
  // The delay is spent still serving; in-flight requests and idle connections need time after it.
  if (delayMs >= timeoutMs)
    throw new ConfigError(
      'invalid configuration:\n  SHUTDOWN_DELAY: must be shorter than SHUTDOWN_TIMEOUT (requests in flight need time after the delay)',
    );
  return { delayMs, timeoutMs };
}

/** The named ranges proxy-addr knows besides addresses and CIDRs. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * Whether a TRUST_PROXY entry believes everybody: `*`, a /0 (or netmask 0.0.0.0) of either family, or the whole
 * IPv4-mapped range (`::ffff:0:0/96`), which proxy-addr matches against every IPv4 peer.
 */
function trustsEveryone(entry: string): boolean {
  if (entry === '*') return true;
  const slash = entry.lastIndexOf('/');
  if (slash < 0) return false;
  const address = entry.slice(0, slash);
  const range = entry.slice(slash + 1);
  if (!ipaddr.isValid(address)) return false;
  const bits = /^\d+$/.test(range) ? Number(range) : ipaddr.IPv4.isValid(range) ? ipaddr.parse(range).prefixLengthFromSubnetMask() : null;
  if (bits === 0) return true;
  const ip = ipaddr.parse(address);
  return bits !== null && ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() && bits <= 96;
}

/**
 * TRUST_PROXY: comma-separated addresses and CIDRs of the reverse proxies in front (or `loopback`, `linklocal`,
 * `uniquelocal`); unset believes nobody's forwarded headers. An entry trusting every address stops start-up:
 * it would let any client choose the address its rate limits count against.
 */
function trustProxyConfig(raw: string | undefined, header: TrustProxy['header'] | undefined): TrustProxy | undefined {
  const invalid = (line: string) => new ConfigError(`invalid configuration:\n  ${line}`);
  if (raw === undefined) {
    if (header !== undefined) throw invalid('TRUST_PROXY_HEADER: only used with TRUST_PROXY, which is unset');
    return undefined;
  }
  const addresses = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (addresses.length === 0) throw invalid('TRUST_PROXY: list the addresses or CIDRs of your reverse proxies (or loopback)');
  for (const entry of addresses) {
    if (trustsEveryone(entry)) {
      throw invalid(
        `TRUST_PROXY: "${entry}" would believe every client's forwarded headers; list only your reverse proxies' addresses or CIDRs`,
      );
    }
    if (PROXY_RANGE_NAMES.has(entry)) continue;
    try {
      proxyAddr.compile(entry);
    } catch {
      throw invalid(`TRUST_PROXY: "${entry}" is not an IP address, a CIDR such as 10.0.0.0/8, or one of loopback, linklocal, uniquelocal`);
    }
  }
  return { addresses, header: header ?? 'x-forwarded' };
}

function webhookConfig(url: string | undefined, secret: string | undefined): Config['auth']['webhook'] {
  if (!url && !secret) return undefined;
  if (!url || !secret) throw new ConfigError('invalid configuration:\n  DELIVERY_WEBHOOK_URL and DELIVERY_WEBHOOK_SECRET go together');
  return { url, secret };
}

type Env = z.infer<typeof envSchema>;

/** A file named by `variable`, read through the injected reader. */
function readConfigFile(variable: string, file: string, readFile: ConfigSources['readFile']): string {
  if (!readFile) throw new ConfigError(`${variable} is set but files cannot be read here`);
  try {
    return readFile(file);
  } catch {
    throw new ConfigError(`invalid configuration:\n  ${variable}: cannot read ${file}`);
  }
}

const x509UsersFile = z
  .object({
    users: z
      .array(
        z
          .object({
            fingerprint256: z.string().optional(),
            subject: z.string().optional(),
            email: z
              .string()
              .trim()
              .toLowerCase()
              .regex(/^[^\s@]{1,64}@[^\s@]{1,190}$/, 'must be an e-mail address'),
          })
          .strict(),
      )
      .min(1),
  })
  .strict();

/** X509_USERS_FILE: `{ "users": [{ "fingerprint256": "AB:CD:..." | "subject": "CN=alice,O=Acme", "email": "..." }] }`. */
function parseClientCertificateUsers(text: string): ClientCertificateUsers {
  const fail = (lines: string[]) =>
    new ConfigError(`invalid configuration:\n${lines.map((line) => `  X509_USERS_FILE: ${line}`).join('\n')}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw fail(['not valid JSON']);
  }
  const parsed = x509UsersFile.safeParse(json);
  if (!parsed.success) throw fail(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(file)'}: ${issue.message}`));
  const byFingerprint = new Map<string, string>();
  const bySubject = new Map<string, string>();
  for (const [index, entry] of parsed.data.users.entries()) {
    const at = `users.${index}`;
    if ((entry.fingerprint256 === undefined) === (entry.subject === undefined))
      throw fail([`${at}: give either fingerprint256 or subject`]);
    if (entry.fingerprint256 !== undefined) {
      const fingerprint = normalizeFingerprint(entry.fingerprint256);
      if (!fingerprint) throw fail([`${at}.fingerprint256: must be a SHA-256 fingerprint (64 hex digits, colons optional)`]);
      if (byFingerprint.has(fingerprint)) throw fail([`${at}.fingerprint256: this certificate is listed twice`]);
      byFingerprint.set(fingerprint, entry.email);
    } else {
      const pairs = parseDistinguishedName(entry.subject!);
      if (!pairs) throw fail([`${at}.subject: must be a distinguished name such as CN=alice,O=Acme`]);
      const key = subjectKey(pairs);
      if (bySubject.has(key)) throw fail([`${at}.subject: this subject is listed twice`]);
      bySubject.set(key, entry.email);
    }
  }
  return { byFingerprint, bySubject };
}

/**
 * The HTTPS listener (TLS_PORT with TLS_CERT_FILE and TLS_KEY_FILE) and its client certificates
 * (TLS_CLIENT_CA_FILE with X509_USERS_FILE). Files are checked here, so a bad one stops start-up clearly.
 */
function tlsConfig(
  e: Env,
  readFile: ConfigSources['readFile'],
): { tls: Config['http']['tls']; clientCertificates: ClientCertificateUsers | undefined } {
  const invalid = (line: string) => new ConfigError(`invalid configuration:\n  ${line}`);
  if (e.TLS_PORT === undefined) {
    const stray = (['TLS_CERT_FILE', 'TLS_KEY_FILE', 'TLS_CLIENT_CA_FILE', 'X509_USERS_FILE'] as const).filter(
      (name) => e[name] !== undefined,
    );
    if (stray.length > 0) throw invalid(`${stray.join(', ')}: only used with TLS_PORT (the HTTPS listener), which is unset`);
    return { tls: undefined, clientCertificates: undefined };
  }
  if (!e.TLS_CERT_FILE || !e.TLS_KEY_FILE)
    throw invalid("TLS_PORT: needs TLS_CERT_FILE and TLS_KEY_FILE (the listener's certificate chain and private key, PEM)");
  if (e.TLS_PORT !== 0 && e.TLS_PORT === e.PORT) throw invalid('TLS_PORT: must differ from PORT');
  if ((e.TLS_CLIENT_CA_FILE === undefined) !== (e.X509_USERS_FILE === undefined)) {
    throw invalid('TLS_CLIENT_CA_FILE and X509_USERS_FILE go together (whose client certificates are accepted, and whom they sign in)');
  }
  const cert = readConfigFile('TLS_CERT_FILE', e.TLS_CERT_FILE, readFile);
  const key = readConfigFile('TLS_KEY_FILE', e.TLS_KEY_FILE, readFile);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw invalid(`TLS_CERT_FILE: ${e.TLS_CERT_FILE} holds no PEM certificate`);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw invalid(`TLS_KEY_FILE: ${e.TLS_KEY_FILE} holds no unencrypted PEM private key`);
  }
  if (!certificate.checkPrivateKey(privateKey)) throw invalid('TLS_KEY_FILE: the key does not belong to the certificate in TLS_CERT_FILE');
  let clientCa: string | undefined;
  let clientCertificates: ClientCertificateUsers | undefined;
  if (e.TLS_CLIENT_CA_FILE && e.X509_USERS_FILE) {
    clientCa = readConfigFile('TLS_CLIENT_CA_FILE', e.TLS_CLIENT_CA_FILE, readFile);
    const blocks = clientCa.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    if (blocks.length === 0) throw invalid(`TLS_CLIENT_CA_FILE: ${e.TLS_CLIENT_CA_FILE} holds no PEM certificate`);
    for (const [index, block] of blocks.entries()) {
      try {
        new X509Certificate(block);
      } catch {
        throw invalid(`TLS_CLIENT_CA_FILE: certificate ${index + 1} of ${e.TLS_CLIENT_CA_FILE} cannot be parsed`);
      }
    }
    clientCertificates = parseClientCertificateUsers(readConfigFile('X509_USERS_FILE', e.X509_USERS_FILE, readFile));
  }
  return { tls: { port: e.TLS_PORT, cert, key, clientCa }, clientCertificates };
}

/**
 * METRICS_PORT (a listener of its own, on HOST, so metrics never share the public port) and the OTLP endpoint.
 * The endpoint is the collector's base URL, as OpenTelemetry's OTEL_EXPORTER_OTLP_ENDPOINT defines it: traces go
 * to its `/v1/traces`.
 */
function observabilityConfig(e: Env): Config['observability'] {
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT !== 0 && (e.METRICS_PORT === e.PORT || e.METRICS_PORT === e.TLS_PORT)) {
    throw new ConfigError(
      'invalid configuration:\n  METRICS_PORT: must differ from PORT and TLS_PORT (metrics have a listener of their own)',
    );
  }
  const endpoint = e.OTEL_EXPORTER_OTLP_ENDPOINT;
  return {
    metricsPort: e.METRICS_PORT,
    tracing: endpoint ? { tracesUrl: `${endpoint.replace(/\/+$/, '')}/v1/traces`, serviceName: e.OTEL_SERVICE_NAME } : undefined,
  };
}

/**
 * The upstream OpenID provider: UPSTREAM_ISSUER, UPSTREAM_CLIENT_ID and UPSTREAM_CLIENT_SECRET together (or none),
 * the issuer an https URL (plain http only on localhost or 127.0.0.1, for development) without query or fragment.
 */
function upstreamConfig(e: Env): Config['auth']['upstream'] {
  const invalid = (line: string) => new ConfigError(`invalid configuration:\n  ${line}`);
  const { UPSTREAM_ISSUER: issuer, UPSTREAM_CLIENT_ID: clientId, UPSTREAM_CLIENT_SECRET: clientSecret, UPSTREAM_NAME: name } = e;
  if (!issuer && !clientId && !clientSecret) {
    if (name) throw invalid('UPSTREAM_NAME: only used with UPSTREAM_ISSUER, which is unset');
    return undefined;
  }
  if (!issuer || !clientId || !clientSecret)
    throw invalid(
      "UPSTREAM_ISSUER, UPSTREAM_CLIENT_ID and UPSTREAM_CLIENT_SECRET go together (the provider, and this server's client there)",
    );
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw invalid(`UPSTREAM_ISSUER: "${issuer}" is not a URL such as https://accounts.example.com`);
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw invalid('UPSTREAM_ISSUER: must be an https URL (plain http only on localhost or 127.0.0.1)');
  if (url.search || url.hash || url.username || url.password)
    throw invalid('UPSTREAM_ISSUER: must have no query, fragment or credentials (it is the issuer identifier)');
  return { issuer, clientId, clientSecret, name: name ?? url.hostname };
}

function authConfig(
  configured: OidcClient[],
  demo: boolean,
  publicUrl: string,
): Omit<
  Config['auth'],
  'smtpUrl' | 'mailFrom' | 'webhook' | 'selfSignup' | 'passwords' | 'relyingParty' | 'signInPolicy' | 'clientCertificates' | 'upstream'
> {
  const clients = [...configured];
  if (demo && !clients.some((client) => client.client_id === DEMO_CLIENT_ID)) {
    // A public client (no secret, PKCE) for the demo page served at PUBLIC_URL.
    clients.push({
      client_id: DEMO_CLIENT_ID,
      redirect_uris: [`${publicUrl}/callback`],
      post_logout_redirect_uris: [`${publicUrl}/`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      first_party: true,
    });
  }
  return {
    clients,
    firstPartyClientIds: clients.filter((client) => client.first_party).map((client) => client.client_id),
    demoClientId: demo ? DEMO_CLIENT_ID : undefined,
  };
}
