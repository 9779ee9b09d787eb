import path from 'node:path';
import { apiAudienceConfig } from './audience.js';
import { authConfig, parseClients } from './clients.js';
import { SIGN_IN_FACTORS } from '@latchkey/auth/configuration';
import { readBudgetSettings } from './budget.js';
import { relyingPartyConfig, signInPolicyConfig, upstreamConfig, webhookConfig } from './auth.js';
import { type Env, envSchema, originSchema } from './env.js';
import { ConfigError } from './error.js';
import { readConfigFile } from './files.js';
import { tlsConfig, trustProxyConfig } from './network.js';
import type { Config, ConfigSources } from './types.js';

/**
 * All configuration is read and validated here, once, at start-up (`loadConfig`); everything else receives
 * the resulting `Config` object (nothing below this file reads `process.env`). The variables' schema and the
 * checks of each concern live in config/.
 */

export { parseDurationSeconds } from './env.js';
export { ConfigError } from './error.js';
export type { Config, ConfigSources } from './types.js';

export function loadConfig({ env, readFile, version = '0.0.0', factors = SIGN_IN_FACTORS }: ConfigSources): Config {
  const e = parseEnv(env);
  const production = e.NODE_ENV === 'production';
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  const signingKey = signingKeyConfig(e, readFile, production);
  const corsOrigins = corsOriginsConfig(e.CORS_ORIGINS, production, publicUrl);

  const relyingParty = relyingPartyConfig(e.RP_ID, e.RP_NAME, e.WEBAUTHN_ORIGINS, publicUrl);
  const { tls, clientCertificates } = tlsConfig(e, readFile);
  const upstream = upstreamConfig(e);
  const signInPolicy = signInPolicyConfig(e.AUTH_POLICY_FILE, readFile, factors, {
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
      ...apiAudienceConfig(e.API_AUDIENCE, publicUrl),
      clockSkewSeconds: e.JWT_CLOCK_SKEW,
      accessTokenTtlSeconds: e.ACCESS_TOKEN_TTL,
      cacheSize: e.TOKEN_CACHE_SIZE,
      dpopProofMaxAgeSeconds: e.DPOP_PROOF_MAX_AGE,
    },
    limits: limitsConfig(e),
    graphiql: e.GRAPHIQL ?? !production,
    persisted: persistedConfig(e, readFile),
    budget: readBudgetSettings(e.API_BUDGET, e.API_BUDGET_FILE, readFile),
    publicCacheMaxAge: e.PUBLIC_CACHE_MAX_AGE,
    observability: observabilityConfig(e),
    audit: { retentionSeconds: e.AUDIT_RETENTION },
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
      bindLinksToBrowser: e.BIND_LINKS_TO_BROWSER,
      privateNetworkFetch: e.OIDC_PRIVATE_NETWORK_FETCH,
      passwords: e.PASSWORDS,
      relyingParty,
      signInPolicy,
      factors,
      upstream,
      clientCertificates,
      ...authConfig(parseClients(e.OIDC_CLIENTS), e.OIDC_DEMO_CLIENT ?? !production, publicUrl, e.OIDC_CLI_CLIENT),
    },
  };
}

/** The variables, validated against their schema (every problem at once). */
function parseEnv(env: ConfigSources['env']): Env {
  // Empty strings mean "unset": docker-compose and shells often export VAR= .
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/** SIGNING_KEY, or the file SIGNING_KEY_FILE names; required in production. */
function signingKeyConfig(e: Env, readFile: ConfigSources['readFile'], production: boolean): string | undefined {
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
  return signingKey;
}

/** CORS_ORIGINS, a comma-separated list; outside production it defaults to the public URL's origin. */
function corsOriginsConfig(configured: string | undefined, production: boolean, publicUrl: string): Set<string> {
  const corsOrigins = new Set<string>();
  const rawOrigins = configured ?? (production ? '' : new URL(publicUrl).origin);
  for (const item of rawOrigins
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const result = originSchema.safeParse(item);
    if (!result.success) throw new ConfigError(`invalid configuration:\n  CORS_ORIGINS: ${result.error.issues[0]?.message}`);
    corsOrigins.add(result.data);
  }
  return corsOrigins;
}

function limitsConfig(e: Env): Config['limits'] {
  return {
    maxBodyBytes: e.MAX_BODY_BYTES,
    maxUrlBytes: e.MAX_URL_BYTES,
    maxBatch: e.MAX_BATCH,
    maxDepth: e.MAX_DEPTH,
    maxAliases: e.MAX_ALIASES,
    maxTokens: e.MAX_TOKENS,
    maxDirectives: e.MAX_DIRECTIVES,
    maxCost: e.MAX_COST,
    defaultListSize: e.DEFAULT_LIST_SIZE,
  };
}

function persistedConfig(e: Env, readFile: ConfigSources['readFile']): Config['persisted'] {
  return {
    mode: e.PERSISTED_MODE,
    allowlist: e.PERSISTED_ALLOWLIST_FILE
      ? { file: e.PERSISTED_ALLOWLIST_FILE, text: readConfigFile('PERSISTED_ALLOWLIST_FILE', e.PERSISTED_ALLOWLIST_FILE, readFile) }
      : undefined,
    cacheSize: e.PERSISTED_CACHE_SIZE,
    maxRegistrations: e.PERSISTED_MAX_REGISTRATIONS,
    registrationsPerMinute: e.PERSISTED_REGISTRATIONS_PER_MINUTE,
  };
}

function shutdownConfig(delayMs: number, timeoutMs: number): Config['shutdown'] {
  // The delay is spent still serving; in-flight requests and idle connections need time after it.
  if (delayMs >= timeoutMs)
    throw new ConfigError(
      'invalid configuration:\n  SHUTDOWN_DELAY: must be shorter than SHUTDOWN_TIMEOUT (requests in flight need time after the delay)',
    );
  return { delayMs, timeoutMs };
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
