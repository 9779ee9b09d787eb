import { readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createOwnDatabase, seedPgliteDataDir, testTempDir } from '@latchkey/db/testing';
import { freePort } from './browser-session.js';
import { Writable } from 'node:stream';
import type { JWK } from 'jose';
import { loadConfig, type Config, type ConfigSources } from '../../src/config/load.js';
import {
  generateSigningJwk,
  mintAccessToken,
  type MintAccessTokenInput,
  parseSigningKey,
  type SigningKey,
  withResourceMetadata,
} from '@latchkey/auth/tokens';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/service.js';

export interface TestService extends RunningService {
  config: Config;
  /** the server's private signing key as a JWK (tests forge variants with it) */
  privateJwk: JWK;
  signingKey: SigningKey;
  /** every log line the server wrote, parsed */
  logs: Record<string, unknown>[];
  /** raw log text, for "never logged" assertions */
  logText(): string;
  /** a valid access token for `subject` (defaults: 10 min, amr otp) */
  token(subject?: string, input?: Partial<MintAccessTokenInput>): Promise<string>;
  graphqlUrl: string;
  stop(): Promise<void>;
}

/** Which database the suite runs on: PostgreSQL when DATABASE_URL is set (CI), else embedded PGlite. */
export const databaseKind = process.env['DATABASE_URL'] ? 'postgres' : 'pglite';

let announced = false;

export interface TestServiceOptions {
  /**
   * The test makes the database fail: SERVICE_UNAVAILABLE answers (503) are then expected, not a fault of the
   * service. 500s stay forbidden. @default false
   */
  outages?: boolean;
  /** the ended-sessions list's clock (startService's `endedSessionsClock`) @default Date.now */
  endedSessionsClock?: () => number;
  /** the sign-in factors the service knows (loadConfig's `factors`) @default the registry's */
  factors?: ConfigSources['factors'];
}

/**
 * A DATA_DIR for services a test starts with its own (several lives of one service, or instances sharing a
 * directory): in the run's fast directory, and without DATABASE_URL holding a copy of the migrated template.
 */
export function serviceDataDir(label: string): string {
  const dataDir = testTempDir(label);
  if (databaseKind === 'pglite') seedPgliteDataDir(dataDir);
  return dataDir;
}

/**
 * Starts the real service on 127.0.0.1 with an ephemeral port, a fresh DATA_DIR, and a generated key.
 * `env` overrides configuration exactly as environment variables would.
 */
export async function startTestService(
  env: Record<string, string | undefined> = {},
  options: TestServiceOptions = {},
): Promise<TestService> {
  if (!announced) {
    announced = true;
    process.stdout.write(`[latchkey tests] database: ${databaseKind}\n`);
  }
  const dataDir = testTempDir();
  // Test files run in parallel and some reseed (truncate) the domain tables: on PostgreSQL each service
  // gets a database of its own, as each gets its own PGlite directory without DATABASE_URL. Both start as a
  // copy of the run's migrated template.
  const ownDatabase =
    !('DATABASE_URL' in env) && process.env['DATABASE_URL'] ? await createOwnDatabase(process.env['DATABASE_URL']) : undefined;
  if (!('DATABASE_URL' in env) && !process.env['DATABASE_URL']) seedPgliteDataDir(dataDir);
  const privateJwk = await generateSigningJwk();
  const config = loadConfig({
    env: {
      NODE_ENV: 'test',
      PORT: '0',
      HOST: '127.0.0.1',
      PUBLIC_URL: 'http://localhost:4000',
      DATA_DIR: dataDir,
      DATABASE_URL: ownDatabase?.url ?? process.env['DATABASE_URL'],
      SIGNING_KEY: JSON.stringify(privateJwk),
      LOG_LEVEL: 'info',
      API_BUDGET_FILE: process.env['API_BUDGET_FILE'],
      ...env,
    },
    readFile: (file) => readFileSync(file, 'utf8'),
    version: '0.1.0-test',
    factors: options.factors,
  });
  const logs: Record<string, unknown>[] = [];
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const lines = chunk.toString('utf8');
      text += lines;
      for (const line of lines.split('\n').filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const service = await startService(config, createLogger(config.logLevel, { destination: sink }), {
    endedSessionsClock: options.endedSessionsClock,
  });
  const signingKey = await parseSigningKey(JSON.stringify(privateJwk));
  return {
    ...service,
    config,
    privateJwk,
    signingKey,
    logs,
    logText: () => text,
    graphqlUrl: `${service.url}/graphql`,
    token: (subject = 'user-1', input = {}) =>
      mintAccessToken(signingKey, {
        subject,
        issuer: config.tokens.issuer,
        audience: config.tokens.audience,
        ttlSeconds: 600,
        amr: ['otp'],
        ...input,
      }),
    async stop() {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
      await ownDatabase?.drop();
      // Acceptance rule: no request in the suite gets a 5xx, except readiness while the database is down and, in
      // tests that take the database away, the honest 503 of an outage.
      const serverErrors = logs.filter(
        (line) =>
          line['msg'] === 'request' &&
          Number(line['status']) >= 500 &&
          line['path'] !== '/readyz' &&
          !(options.outages && Number(line['status']) === 503),
      );
      if (serverErrors.length > 0) {
        throw new Error(`the server answered 5xx: ${JSON.stringify(serverErrors.slice(0, 5))}`);
      }
    },
  };
}

export { createOwnDatabase };

export interface GraphQLCall {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
  extensions?: unknown;
}

export interface PostOptions {
  accept?: string;
  token?: string;
  headers?: Record<string, string>;
}

/** POST /graphql as a client would: JSON body, chosen Accept, optional bearer token. */
export async function postGraphQL(url: string, body: GraphQLCall | GraphQLCall[] | string, options: PostOptions = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: options.accept ?? 'application/graphql-response+json',
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return readResponse(response);
}

export async function getGraphQL(url: string, params: Record<string, string>, options: PostOptions = {}) {
  const query = new URLSearchParams(params).toString();
  const response = await fetch(`${url}?${query}`, {
    headers: {
      accept: options.accept ?? 'application/graphql-response+json',
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
  });
  return readResponse(response);
}

/** Status, headers, raw text and (when it is JSON) the parsed body. */
async function readResponse(response: Response) {
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/**
 * A test service whose PUBLIC_URL is the address it listens on, named `localhost` (cookies, redirects and
 * the WebAuthn RP ID need a host name; the server itself listens on 127.0.0.1). Returns it and that base URL.
 */
export async function startLocalhostService(
  env: Record<string, string | undefined> = {},
  options: TestServiceOptions = {},
): Promise<{ service: TestService; base: string }> {
  const port = await freePort();
  const base = `http://localhost:${port}`;
  return { service: await startTestService({ PORT: String(port), PUBLIC_URL: base, ...env }, options), base };
}

/**
 * A POST through node:http: the exact headers reach the server (a Content-Type or none, tabs and bytes 0x80-0xff a
 * client may send), which fetch's own header checks would not let through.
 */
export function rawPost(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-length': Buffer.byteLength(body), ...headers } });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A 401's challenge as the service sends it: naming its protected resource metadata (RFC 9728 §5.1). */
export function challengeOf(service: Pick<TestService, 'config'>, challenge: string): string {
  return withResourceMetadata(challenge, `${service.config.tokens.resourceIdentifier}/.well-known/oauth-protected-resource`);
}
