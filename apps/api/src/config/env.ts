import { z } from 'zod';
import { ConfigError } from './error.js';

// The environment variables, as one schema: parsed once by loadConfig (empty strings count as unset).

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

/** An origin (scheme://host:port), from a URL or an origin as written. */
export const originSchema = z.string().transform((value, ctx) => {
  try {
    const url = new URL(value);
    if (url.origin === 'null') throw new Error('opaque origin');
    return url.origin;
  } catch {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not an origin such as https://app.example.com` });
    return z.NEVER;
  }
});

export const envSchema = z.object({
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
  /** the first-party public client `latchkey-cli` of `pnpm latchkey login` (the device grant). On by default. */
  OIDC_CLI_CLIENT: bool.default(true),
  /** the provider's outgoing requests (back-channel logout) may reach loopback and private addresses. Off by default (SSRF). */
  OIDC_PRIVATE_NETWORK_FETCH: bool.default(false),
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
  /** a sign-in link signs in only the browser that asked for it (OWASP ASVS 6.6.2). Off by default. */
  BIND_LINKS_TO_BROWSER: bool.default(false),
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
  API_AUDIENCE: z.string().min(1).optional(),
  JWT_CLOCK_SKEW: duration.default(30),
  /** how old a DPoP proof's `iat` may be (RFC 9449) */
  DPOP_PROOF_MAX_AGE: duration.pipe(z.number().int().min(1, 'must be at least 1s').max(3600, 'must be at most 1h')).default(60),
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
  /** how long security events stay in the audit trail (purged only behind a signed anchor) */
  AUDIT_RETENTION: duration.pipe(z.number().int().min(1, 'must be at least 1s')).default(400 * 86_400),
  /** the largest WebSocket message a client may send */
  WS_MAX_MESSAGE_BYTES: positiveInt(16 * 1024 * 1024).default(64 * 1024),
  /** max-age of publicly cacheable GET answers (operations of @public fields only, no credentials); 0: never */
  /** fair-use cost budgets per caller: on (default) or off, checked by readBudgetSettings (config/budget.ts) */
  API_BUDGET: z.string().optional(),
  /** JSON file of the budgets' bucket sizes (guest, plans.FREE, plans.PRO), checked at start-up even when off */
  API_BUDGET_FILE: z.string().min(1).optional(),
  PUBLIC_CACHE_MAX_AGE: z.coerce.number().int().min(0).max(31_536_000).default(60),
  INTROSPECTION: z.enum(['open', 'signed-in', 'off']).optional(),

  /** Prometheus metrics (and /healthz, /readyz) on a listener of their own, HOST:METRICS_PORT; unset: no metrics */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** OTLP/HTTP collector base URL (traces go to <url>/v1/traces); unset: no traces */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  /** the service.name of exported spans */
  OTEL_SERVICE_NAME: z.string().trim().min(1).max(100).default('latchkey'),
});

export type Env = z.infer<typeof envSchema>;
