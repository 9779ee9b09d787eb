import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseDurationSeconds, type Config } from './load.js';

// Unit tests of loadConfig: the one place configuration is read (spec Authentication 4: the signing
// secret comes from configuration, never from source code).

const PRIVATE_JWK_STAND_IN = '{"kty":"RSA","d":"not-parsed-here"}';

function load(env: Record<string, string | undefined>): Config {
  return loadConfig({ env });
}

/** loadConfig must throw a ConfigError whose message names `variable`. */
function expectConfigError(env: Record<string, string | undefined>, variable: string): ConfigError {
  let caught: unknown;
  try {
    load(env);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  expect((caught as ConfigError).message).toContain(variable);
  return caught as ConfigError;
}

describe('loadConfig defaults', () => {
  it('development by default: port 4000, issuer and CORS origin from the local URL', () => {
    const config = load({});
    expect(config.env).toBe('development');
    expect(config.http.port).toBe(4000);
    expect(config.http.host).toBe('127.0.0.1');
    expect(config.http.publicUrl).toBe('http://localhost:4000');
    expect(config.tokens.issuer).toBe('http://localhost:4000');
    // The API's resource identifier (RFC 9728) is its audience; tokens for the former default stay accepted.
    expect(config.tokens.audience).toBe('http://localhost:4000');
    expect(config.tokens.resourceIdentifier).toBe('http://localhost:4000');
    expect(config.tokens.acceptedAudiences).toEqual(['http://localhost:4000', 'urn:latchkey:api']);
    expect([...config.http.corsOrigins]).toEqual(['http://localhost:4000']);
    expect(config.keys.signingKey).toBeUndefined();
    expect(config.database.url).toBeUndefined();
  });

  it('limit defaults', () => {
    expect(load({}).limits).toEqual({
      maxBodyBytes: 1024 * 1024,
      maxUrlBytes: 8192,
      maxBatch: 10,
      maxDepth: 15,
      maxAliases: 30,
      maxTokens: 5000,
      maxDirectives: 20,
      maxCost: 5000,
      defaultListSize: 10,
    });
  });

  it('token defaults: 30 s clock skew, 10 min access tokens, 10000 cached tokens', () => {
    expect(load({}).tokens).toMatchObject({ clockSkewSeconds: 30, accessTokenTtlSeconds: 600, cacheSize: 10_000 });
  });

  it('development: introspection open and GraphiQL on', () => {
    const config = load({ NODE_ENV: 'development' });
    expect(config.introspection).toBe('open');
    expect(config.graphiql).toBe(true);
  });

  it('production: introspection for signed-in callers only, GraphiQL off, no CORS origin by default', () => {
    const config = load({ NODE_ENV: 'production', SIGNING_KEY: PRIVATE_JWK_STAND_IN });
    expect(config.introspection).toBe('signed-in');
    expect(config.graphiql).toBe(false);
    expect(config.http.corsOrigins.size).toBe(0);
  });

  it('explicit settings win over the environment defaults', () => {
    const config = load({ NODE_ENV: 'production', SIGNING_KEY: PRIVATE_JWK_STAND_IN, INTROSPECTION: 'off', GRAPHIQL: 'true' });
    expect(config.introspection).toBe('off');
    expect(config.graphiql).toBe(true);
  });

  it('PUBLIC_URL sets the issuer (trailing slash dropped); JWT_ISSUER overrides it', () => {
    expect(load({ PUBLIC_URL: 'https://api.example.com/' }).tokens.issuer).toBe('https://api.example.com');
    expect(load({ PUBLIC_URL: 'https://api.example.com', JWT_ISSUER: 'https://id.example.com' }).tokens.issuer).toBe(
      'https://id.example.com',
    );
  });

  it('PUBLIC_URL is the API audience and resource identifier; an explicit API_AUDIENCE is the only audience accepted', () => {
    const byDefault = load({ PUBLIC_URL: 'https://api.example.com/' }).tokens;
    expect(byDefault).toMatchObject({ audience: 'https://api.example.com', resourceIdentifier: 'https://api.example.com' });
    expect(byDefault.acceptedAudiences).toEqual(['https://api.example.com', 'urn:latchkey:api']);
    const explicit = load({ PUBLIC_URL: 'https://api.example.com', API_AUDIENCE: 'urn:acme:api' }).tokens;
    expect(explicit).toMatchObject({ audience: 'urn:acme:api', resourceIdentifier: 'https://api.example.com' });
    expect(explicit.acceptedAudiences).toEqual(['urn:acme:api']);
  });
});

describe('rule 4: the signing secret comes from configuration', () => {
  it('production without SIGNING_KEY throws a ConfigError naming SIGNING_KEY', () => {
    expectConfigError({ NODE_ENV: 'production' }, 'SIGNING_KEY');
  });

  it('production with SIGNING_KEY="" (empty) still throws: empty counts as unset', () => {
    expectConfigError({ NODE_ENV: 'production', SIGNING_KEY: '' }, 'SIGNING_KEY');
  });

  it('SIGNING_KEY is passed through as configured', () => {
    expect(load({ NODE_ENV: 'production', SIGNING_KEY: PRIVATE_JWK_STAND_IN }).keys.signingKey).toBe(PRIVATE_JWK_STAND_IN);
  });

  it('SIGNING_KEY_FILE is read through the injected reader', () => {
    const read: string[] = [];
    const config = loadConfig({
      env: { NODE_ENV: 'production', SIGNING_KEY_FILE: '/run/secrets/key' },
      readFile: (file) => {
        read.push(file);
        return PRIVATE_JWK_STAND_IN;
      },
    });
    expect(read).toEqual(['/run/secrets/key']);
    expect(config.keys.signingKey).toBe(PRIVATE_JWK_STAND_IN);
  });

  it('an unreadable SIGNING_KEY_FILE throws a ConfigError naming SIGNING_KEY_FILE', () => {
    let caught: unknown;
    try {
      loadConfig({
        env: { NODE_ENV: 'production', SIGNING_KEY_FILE: '/missing' },
        readFile: () => {
          throw new Error('ENOENT');
        },
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as Error).message).toContain('SIGNING_KEY_FILE');
  });

  it('development without a key is allowed (a development key is generated under DATA_DIR later)', () => {
    expect(load({ NODE_ENV: 'development' }).keys.signingKey).toBeUndefined();
  });
});

describe('loadConfig refuses invalid values, naming the variable', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['MAX_DEPTH', '0'],
    ['MAX_COST', '-5'],
    ['CORS_ORIGINS', 'not-a-url'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'http://x'],
    ['PUBLIC_URL', 'not a url'],
    ['NODE_ENV', 'staging'],
    ['INTROSPECTION', 'maybe'],
    ['GRAPHIQL', 'sometimes'],
    ['JWT_CLOCK_SKEW', 'soon'],
    ['ACCESS_TOKEN_TTL', '10 minutes'],
    ['EVENT_RETENTION', '0s'],
    ['EVENT_RETENTION', 'forever'],
    ['AUDIT_RETENTION', '0s'],
    ['AUDIT_RETENTION', '400 days'],
    ['API_BUDGET', 'maybe'],
  ])('%s=%s', (variable, value) => {
    expectConfigError({ [variable]: value }, variable);
  });

  it('the message does not echo SIGNING_KEY when another variable is invalid', () => {
    const secret = '{"kty":"RSA","d":"super-secret-private-exponent"}';
    const error = expectConfigError({ SIGNING_KEY: secret, PORT: 'abc' }, 'PORT');
    expect(error.message).not.toContain('super-secret');
  });

  it('one bad origin in CORS_ORIGINS is refused even among good ones', () => {
    expectConfigError({ CORS_ORIGINS: 'https://app.example.com, not-a-url' }, 'CORS_ORIGINS');
  });
});

describe('loadConfig values', () => {
  it('durations: "10m" is 600 seconds, "1h" 3600, "45" 45, "0s" 0', () => {
    expect(load({ ACCESS_TOKEN_TTL: '10m' }).tokens.accessTokenTtlSeconds).toBe(600);
    expect(load({ ACCESS_TOKEN_TTL: '1h' }).tokens.accessTokenTtlSeconds).toBe(3600);
    expect(load({ JWT_CLOCK_SKEW: '45' }).tokens.clockSkewSeconds).toBe(45);
    expect(load({ JWT_CLOCK_SKEW: '0s' }).tokens.clockSkewSeconds).toBe(0);
    expect(parseDurationSeconds('2d')).toBe(172_800);
  });

  it('EVENT_RETENTION: 10 minutes by default, any duration of at least a second', () => {
    expect(load({}).subscriptions.eventRetentionSeconds).toBe(600);
    expect(load({ EVENT_RETENTION: '1h' }).subscriptions.eventRetentionSeconds).toBe(3600);
    expect(load({ EVENT_RETENTION: '2s' }).subscriptions.eventRetentionSeconds).toBe(2);
  });

  it('AUDIT_RETENTION: 400 days by default, any duration of at least a second', () => {
    expect(load({}).audit.retentionSeconds).toBe(400 * 86_400);
    expect(load({ AUDIT_RETENTION: '30d' }).audit.retentionSeconds).toBe(30 * 86_400);
    expect(load({ AUDIT_RETENTION: '1s' }).audit.retentionSeconds).toBe(1);
  });

  it('empty strings count as unset', () => {
    const config = load({
      PORT: '',
      DATABASE_URL: '',
      CORS_ORIGINS: '',
      MAX_DEPTH: '',
      JWT_CLOCK_SKEW: '',
      INTROSPECTION: '',
      GRAPHIQL: '',
      SIGNING_KEY: '',
    });
    expect(config).toEqual(load({}));
  });

  it('numbers, booleans and origins are parsed', () => {
    const config = load({
      PORT: '8080',
      MAX_DEPTH: '7',
      MAX_BATCH: '0',
      GRAPHIQL: 'off',
      CORS_ORIGINS: 'https://app.example.com/some/path, http://localhost:5173',
      DATABASE_URL: 'postgresql://u@db:5432/x',
    });
    expect(config.http.port).toBe(8080);
    expect(config.limits.maxDepth).toBe(7);
    expect(config.limits.maxBatch).toBe(0);
    expect(config.graphiql).toBe(false);
    expect([...config.http.corsOrigins]).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(config.database.url).toBe('postgresql://u@db:5432/x');
  });

  it('DATA_DIR is resolved to an absolute path', () => {
    expect(load({ DATA_DIR: 'relative/dir' }).dataDir).toMatch(/^\/.*relative\/dir$/);
  });
});

describe('database deadline and graceful shutdown', () => {
  it('defaults: DATABASE_TIMEOUT 5 s, SHUTDOWN_DELAY 0, SHUTDOWN_TIMEOUT 10 s', () => {
    const config = load({});
    expect(config.database.timeoutMs).toBe(5000);
    expect(config.shutdown).toEqual({ delayMs: 0, timeoutMs: 10_000 });
  });

  it('durations in milliseconds or seconds: "1500ms", "2s", "3"', () => {
    const config = load({ DATABASE_TIMEOUT: '1500ms', SHUTDOWN_DELAY: '2s', SHUTDOWN_TIMEOUT: '3' });
    expect(config.database.timeoutMs).toBe(1500);
    expect(config.shutdown).toEqual({ delayMs: 2000, timeoutMs: 3000 });
  });

  it.each([
    [{ DATABASE_TIMEOUT: 'soon' }, 'DATABASE_TIMEOUT'],
    [{ DATABASE_TIMEOUT: '10ms' }, 'DATABASE_TIMEOUT'],
    [{ SHUTDOWN_TIMEOUT: '0' }, 'SHUTDOWN_TIMEOUT'],
    [{ SHUTDOWN_DELAY: '-1s' }, 'SHUTDOWN_DELAY'],
    [{ SHUTDOWN_DELAY: '10s', SHUTDOWN_TIMEOUT: '10s' }, 'SHUTDOWN_DELAY'],
  ])('%o is refused, naming %s', (env, variable) => {
    expectConfigError(env, variable);
  });
});

describe('TRUST_PROXY names the reverse proxies whose forwarded headers are believed', () => {
  it('unset: nobody is trusted', () => {
    expect(load({}).http.trustProxy).toBeUndefined();
  });

  it('addresses, CIDRs and loopback; X-Forwarded-For by default, RFC 7239 Forwarded on request', () => {
    expect(
      load({ TRUST_PROXY: 'loopback, 10.0.0.0/8,192.168.1.7, ::1, fd00::/8, 172.16.0.0/255.240.0.0, ::ffff:10.1.2.3, uniquelocal' }).http
        .trustProxy,
    ).toEqual({
      addresses: ['loopback', '10.0.0.0/8', '192.168.1.7', '::1', 'fd00::/8', '172.16.0.0/255.240.0.0', '::ffff:10.1.2.3', 'uniquelocal'],
      header: 'x-forwarded',
    });
    expect(load({ TRUST_PROXY: 'loopback', TRUST_PROXY_HEADER: 'forwarded' }).http.trustProxy?.header).toBe('forwarded');
  });

  it.each(['*', '0.0.0.0/0', '::/0', '10.0.0.1, 0.0.0.0/0', '0.0.0.0/0.0.0.0', '::ffff:0:0/96', '::ffff:0.0.0.0/96'])(
    '"%s" trusts every client: start-up stops',
    (value) => {
      const error = expectConfigError({ TRUST_PROXY: value }, 'TRUST_PROXY');
      expect(error.message).toContain('would believe every client');
    },
  );

  it.each(['proxy.internal', '10.0.0.0/33', '300.1.2.3', '10.0.0.1:80', 'loopback, nonsense', ', ,'])(
    '"%s" is refused, naming the variable',
    (value) => {
      expectConfigError({ TRUST_PROXY: value }, 'TRUST_PROXY');
    },
  );

  it('TRUST_PROXY_HEADER takes x-forwarded or forwarded, and only with TRUST_PROXY', () => {
    expectConfigError({ TRUST_PROXY: 'loopback', TRUST_PROXY_HEADER: 'x-real-ip' }, 'TRUST_PROXY_HEADER');
    expectConfigError({ TRUST_PROXY_HEADER: 'forwarded' }, 'TRUST_PROXY_HEADER');
  });
});

describe('OIDC_CLIENTS may ask only for what is offered (authorization code with PKCE, RFC 9700)', () => {
  const client = (extra: Record<string, unknown>) =>
    JSON.stringify([{ client_id: 'app', redirect_uris: ['https://app.test/cb'], ...extra }]);

  it('response type code and grant types authorization_code and refresh_token are accepted', () => {
    const config = load({ OIDC_CLIENTS: client({ response_types: ['code'], grant_types: ['authorization_code', 'refresh_token'] }) });
    expect(config.auth.clients[0]).toMatchObject({ response_types: ['code'], grant_types: ['authorization_code', 'refresh_token'] });
  });

  it.each([['id_token'], ['code id_token'], ['token'], ['none']])(
    'response type %j stops start-up, naming what is offered',
    (responseType) => {
      const error = expectConfigError(
        { OIDC_CLIENTS: client({ response_types: ['code', responseType] }) },
        'OIDC_CLIENTS.0.response_types.1',
      );
      expect(error.message).toContain('"code"');
    },
  );

  it.each([['implicit'], ['password']])('grant type %j stops start-up, naming what is offered', (grantType) => {
    const error = expectConfigError({ OIDC_CLIENTS: client({ grant_types: [grantType] }) }, 'OIDC_CLIENTS.0.grant_types.0');
    expect(error.message).toContain('"authorization_code"');
  });
});

describe('the device grant (RFC 8628) and the command line client', () => {
  const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';

  it('a client with only the device grant (and refresh tokens) registers without redirect_uris', () => {
    const config = load({
      OIDC_CLIENTS: JSON.stringify([
        { client_id: 'tv', grant_types: [DEVICE, 'refresh_token'], response_types: [], token_endpoint_auth_method: 'none' },
      ]),
    });
    expect(config.auth.clients.find((client) => client.client_id === 'tv')).toMatchObject({
      redirect_uris: [],
      grant_types: [DEVICE, 'refresh_token'],
    });
  });

  it('a client with the authorization code still needs a redirect URI', () => {
    expectConfigError(
      { OIDC_CLIENTS: JSON.stringify([{ client_id: 'app', grant_types: ['authorization_code', DEVICE] }]) },
      'OIDC_CLIENTS.0.redirect_uris',
    );
  });

  it('latchkey-cli is registered by default (first-party, public, the device grant); OIDC_CLI_CLIENT=false leaves it out', () => {
    const config = load({});
    expect(config.auth.clients.find((client) => client.client_id === 'latchkey-cli')).toMatchObject({
      redirect_uris: [],
      grant_types: [DEVICE, 'refresh_token'],
      response_types: [],
      token_endpoint_auth_method: 'none',
    });
    expect(config.auth.firstPartyClientIds).toContain('latchkey-cli');
    const off = load({ OIDC_CLI_CLIENT: 'false' });
    expect(off.auth.clients.map((client) => client.client_id)).not.toContain('latchkey-cli');
    expect(off.auth.firstPartyClientIds).not.toContain('latchkey-cli');
  });
});

describe('METRICS_PORT and OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('both unset by default: no metrics, no traces', () => {
    expect(load({}).observability).toEqual({ metricsPort: undefined, tracing: undefined });
  });

  it('METRICS_PORT is a port of its own; it may not be PORT or TLS_PORT (0 = any free port)', () => {
    expect(load({ METRICS_PORT: '9464' }).observability.metricsPort).toBe(9464);
    expect(load({ PORT: '0', METRICS_PORT: '0' }).observability.metricsPort).toBe(0);
    expectConfigError({ PORT: '4000', METRICS_PORT: '4000' }, 'METRICS_PORT');
    expectConfigError({ METRICS_PORT: 'metrics' }, 'METRICS_PORT');
    expectConfigError({ METRICS_PORT: '70000' }, 'METRICS_PORT');
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT is the collector base URL: traces go to /v1/traces; OTEL_SERVICE_NAME defaults to latchkey', () => {
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).observability.tracing).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      serviceName: 'latchkey',
    });
    expect(
      load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/base/', OTEL_SERVICE_NAME: 'auth-eu' }).observability.tracing,
    ).toEqual({ tracesUrl: 'https://otel.example.com/base/v1/traces', serviceName: 'auth-eu' });
    expectConfigError({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT');
    expectConfigError({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' }, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  });
});

describe('API_BUDGET and API_BUDGET_FILE', () => {
  it('budgets are on by default; the file is read through the injected reader and a bad one stops start-up', () => {
    expect(load({}).budget.enabled).toBe(true);
    const file = '{"guest":{"capacity":100,"restorePerSecond":5},"plans":{"FREE":{"capacity":0,"restorePerSecond":50}}}';
    let caught: unknown;
    try {
      loadConfig({ env: { API_BUDGET: 'off', API_BUDGET_FILE: '/etc/budget.json' }, readFile: () => file });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as Error).message).toContain('API_BUDGET_FILE: plans.FREE.capacity must be a positive number');
    expect((caught as Error).message).toContain('API_BUDGET_FILE: plans.PRO is missing');
  });
});
