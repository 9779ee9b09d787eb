import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { demoOf, type Demo } from './support/demo.js';
import { databaseKind, postGraphQL, startLocalhostService, type TestService } from './support/service.js';
import { COST_REPORTED } from './support/cost.js';
import { sample, scrapeMetrics, scrapeMetricsUntil } from './support/metrics.js';
import { overSse, overWebSocket, sseClient, untilOpen, wsClient } from './support/subscriptions.js';

/** The manifest `pnpm codegen` writes for packages/client, imported as the allowlist beside APQ. */
const MANIFEST = createRequire(import.meta.url).resolve('@latchkey/client/persisted-documents.json');
const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>;
const STATUS_HASH = Object.entries(manifest)
  .find(([, body]) => body.startsWith('query Status'))![0]
  .slice('sha256:'.length);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let service: TestService;
let base: string;
let demo: Demo;

beforeAll(async () => {
  ({ service, base } = await startLocalhostService({ METRICS_PORT: '0', PERSISTED_ALLOWLIST_FILE: MANIFEST }));
  await seedDemoData(service.database);
  demo = await demoOf(service);
});
afterAll(() => service?.stop());

const scrape = () => scrapeMetrics(service.metricsUrl!);
const scrapeUntil = (check: (text: string) => boolean, what: string) => scrapeMetricsUntil(service.metricsUrl!, check, what);

describe('the metrics listener (METRICS_PORT)', () => {
  it('/metrics answers on METRICS_PORT only: the main port answers 404 there', async () => {
    expect(service.metricsUrl).toBeDefined();
    expect(new URL(service.metricsUrl!).port).not.toBe(new URL(service.url).port);
    const main = await fetch(`${service.url}/metrics`);
    expect(main.status).toBe(404);
    expect(await main.json()).toEqual({ statusCode: 404, message: 'Not Found', error: 'Not Found' });

    const metrics = await fetch(`${service.metricsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await metrics.text();
    for (const name of [
      'latchkey_http_request_duration_seconds',
      'latchkey_graphql_operations_total',
      'latchkey_sign_in_failures_total',
      'latchkey_rate_limit_refusals_total',
      'latchkey_subscriptions_open',
      'latchkey_event_delivery_lag_seconds',
      'process_cpu_seconds_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect((await fetch(`${service.metricsUrl}/metrics`, { method: 'HEAD' })).status).toBe(200);
  });

  it('the metrics port answers /healthz and /readyz as the main port does, 404 for anything else, 405 for other methods', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const [main, metrics] = await Promise.all([fetch(`${service.url}${path}`), fetch(`${service.metricsUrl}${path}`)]);
      expect(metrics.status).toBe(200);
      expect(await metrics.json()).toEqual(await main.json());
    }
    expect(await (await fetch(`${service.metricsUrl}/readyz`)).json()).toEqual({ status: 'ok', database: databaseKind });
    for (const path of ['/graphql', '/api/documents', '/metrics/x', '/']) {
      const answer = await fetch(`${service.metricsUrl}${path}`);
      expect(answer.status).toBe(404);
      expect(await answer.json()).toMatchObject({ statusCode: 404 });
    }
    const post = await fetch(`${service.metricsUrl}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('HTTP requests by route template and status', () => {
  it('a REST request counts under /api/documents/:id, an unknown path under `other`; neither path appears', async () => {
    const id = randomUUID();
    const secret = `secret-${randomUUID()}`;
    const before = await scrape();
    const count = (text: string, route: string, status: string) =>
      sample(text, 'latchkey_http_request_duration_seconds_count', { route, status });
    expect((await fetch(`${base}/api/documents/${id}`)).status).toBe(401);
    expect((await fetch(`${base}/api/documents/${id}`, { headers: { authorization: `Bearer ${await demo.token('alice')}` } })).status).toBe(
      404,
    );
    expect((await fetch(`${base}/api/documents/${id}/publish`, { method: 'POST' })).status).toBe(401);
    expect((await fetch(`${base}/${secret}?token=${secret}`)).status).toBe(404);
    expect((await fetch(`${base}/api/${secret}`)).status).toBe(404);
    expect((await postGraphQL(`${base}/graphql`, { query: '{ status { version } }' })).status).toBe(200);
    const after = await scrapeUntil((text) => count(text, '/graphql', '200') > count(before, '/graphql', '200'), 'the GraphQL request');
    expect(count(after, '/api/documents/:id', '401') - count(before, '/api/documents/:id', '401')).toBe(1);
    expect(count(after, '/api/documents/:id', '404') - count(before, '/api/documents/:id', '404')).toBe(1);
    expect(count(after, '/api/documents/:id/publish', '401') - count(before, '/api/documents/:id/publish', '401')).toBe(1);
    expect(count(after, 'other', '404') - count(before, 'other', '404')).toBe(2);
    expect(count(after, '/graphql', '200') - count(before, '/graphql', '200')).toBe(1);
    expect(after).not.toContain(id);
    expect(after).not.toContain(secret);
  });
});

describe('GraphQL operations by name only for allowlisted documents', () => {
  const operations = (text: string, name: string, type = 'query') =>
    sample(text, 'latchkey_graphql_operations_total', { operation_name: name, operation_type: type });

  it('a client-chosen operation name appears nowhere (query text, APQ registrations, a wrong operationName); an allowlisted one does, over HTTP and WebSocket', async () => {
    const before = await scrape();
    // Query text with a name of the client's choosing.
    const text = await postGraphQL(`${base}/graphql`, {
      query: 'query ClientChosenName { status { version } }',
      operationName: 'ClientChosenName',
    });
    expect(text.json.data.status.version).toBeDefined();
    // An APQ registration: the text is still the client's, so its name is too.
    const apqQuery = 'query ApqChosenName { status { service } }';
    const apq = { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(apqQuery) } } };
    expect((await postGraphQL(`${base}/graphql`, { query: apqQuery, ...apq })).json.data.status.service).toBe('latchkey');
    expect((await postGraphQL(`${base}/graphql`, apq)).json.data.status.service).toBe('latchkey');
    // The allowlisted Status document (PERSISTED_ALLOWLIST_FILE), by its id, over HTTP and over WebSocket.
    const status = { extensions: { persistedQuery: { version: 1, sha256Hash: STATUS_HASH } } };
    expect((await postGraphQL(`${base}/graphql`, status)).json.data.status.service).toBe('latchkey');
    const client = wsClient(`${base}/graphql`);
    const overWs = overWebSocket(client, { query: '', ...status });
    await overWs.ended();
    expect(overWs.results).toEqual([{ data: { status: expect.objectContaining({ service: 'latchkey' }) }, extensions: COST_REPORTED }]);
    await client.dispose();
    // An allowlisted document asked for under an operation name it does not contain.
    const injected = await postGraphQL(`${base}/graphql`, { ...status, operationName: 'InjectedName' });
    expect(injected.json.errors).toBeDefined();

    const after = await scrape();
    for (const chosen of ['ClientChosenName', 'ApqChosenName', 'InjectedName']) expect(after).not.toContain(chosen);
    expect(operations(after, 'Status') - operations(before, 'Status')).toBe(2);
    expect(operations(after, 'other') - operations(before, 'other')).toBe(3);
    // Every operation name label in the output is one of the allowlist's (or `other`).
    const allowed = new Set([
      'other',
      ...Object.values(manifest).flatMap((body) => [...body.matchAll(/(?:query|mutation|subscription) (\w+)/g)].map((match) => match[1]!)),
    ]);
    for (const [, name] of after.matchAll(/operation_name="([^"]*)"/g)) expect(allowed).toContain(name);
  });

  it('errors are counted by code; a variable value never appears', async () => {
    const errors = (text: string, code: string) => sample(text, 'latchkey_graphql_errors_total', { code });
    const before = await scrape();
    expect((await postGraphQL(`${base}/graphql`, { query: '{ noSuchField }' })).status).toBe(400);
    const secret = `variable-${randomUUID()}`;
    const coercion = await postGraphQL(
      `${base}/graphql`,
      { query: 'query ($first: Int) { documents(first: $first) { pageInfo { hasNextPage } } }', variables: { first: secret } },
      { token: await demo.token('alice') },
    );
    expect(coercion.json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect((await postGraphQL(`${base}/graphql`, { query: '{ viewer { subject } }' })).json.errors[0].extensions.code).toBe(
      'UNAUTHENTICATED',
    );
    const after = await scrape();
    expect(errors(after, 'GRAPHQL_VALIDATION_FAILED') - errors(before, 'GRAPHQL_VALIDATION_FAILED')).toBe(1);
    expect(errors(after, 'BAD_USER_INPUT') - errors(before, 'BAD_USER_INPUT')).toBe(1);
    expect(errors(after, 'UNAUTHENTICATED') - errors(before, 'UNAUTHENTICATED')).toBe(1);
    expect(after).not.toContain(secret);
  });
});

describe('open subscriptions', () => {
  it('the gauge goes up while a subscription is open (SSE and WebSocket) and back down when it ends', async () => {
    const open = (text: string) => sample(text, 'latchkey_subscriptions_open');
    const sockets = (text: string) => sample(text, 'latchkey_websocket_connections_open');
    const before = await scrape();
    const token = await demo.token('alice');
    const payload = { query: 'subscription { documentChanged(organization: "acme") { kind } }' };
    const sse = overSse(sseClient(`${base}/graphql`, token), payload);
    const client = wsClient(`${base}/graphql`, token);
    const ws = overWebSocket(client, payload);
    await scrapeUntil(
      (text) => open(text) === open(before) + 2 && sockets(text) === sockets(before) + 1,
      'two open subscriptions and one socket',
    );
    sse.dispose();
    await scrapeUntil((text) => open(text) === open(before) + 1, 'the SSE subscription closed');
    ws.dispose();
    await client.dispose();
    await scrapeUntil((text) => open(text) === open(before) && sockets(text) === sockets(before), 'every subscription closed');
  });
});

describe('the database pool and event delivery lag', () => {
  it('the pool gauges report the pool (its size, and nothing in use once idle); each delivered event is one lag observation', async () => {
    const idle = await scrapeUntil(
      (text) => sample(text, 'latchkey_db_pool_connections_in_use', { database: databaseKind }) === 0,
      'an idle pool',
    );
    expect(sample(idle, 'latchkey_db_pool_size', { database: databaseKind })).toBe(
      databaseKind === 'postgres' ? service.config.database.poolSize : 1,
    );
    expect(sample(idle, 'latchkey_db_pool_waiting', { database: databaseKind })).toBe(0);
    const delivered = (text: string) => sample(text, 'latchkey_event_delivery_lag_seconds_count');
    const token = await demo.token('alice');
    const before = service.subscriptions.size();
    const received = overSse(sseClient(`${base}/graphql`, token), {
      query: 'subscription { documentChanged(organization: "acme") { kind } }',
    });
    await untilOpen(service.subscriptions, (open) => open > before);
    await postGraphQL(
      service.graphqlUrl,
      { query: `mutation { createDocument(input: { organization: "acme", title: "lag ${randomUUID()}" }) { document { id } } }` },
      { token },
    );
    await received.waitFor(1);
    const after = await scrapeUntil((text) => delivered(text) >= delivered(idle) + 1, 'one more delivered event');
    expect(sample(after, 'latchkey_event_delivery_lag_seconds_sum')).toBeGreaterThanOrEqual(
      sample(idle, 'latchkey_event_delivery_lag_seconds_sum'),
    );
    received.dispose();
  });
});

describe('sign-in attempts, failures, lockouts and rate-limit refusals by method', () => {
  it('six link requests for one address: the sixth counts as a token-generation refusal', async () => {
    const refusals = (text: string) => sample(text, 'latchkey_rate_limit_refusals_total', { limit: 'token-generation' });
    const before = await scrape();
    const browser = new BrowserSession(base);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await browser.request('/ott/generate', { json: { username: 'bob@acme.test' } })).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
    expect(refusals(await scrape()) - refusals(before)).toBe(1);
  });

  // Last: it locks 127.0.0.1 out of submitting tokens. The default policy pauses 2, 4 and 8 s between the wrong
  // tokens before the fifth locks the source out: this test tries again until a pause is over (each refusal
  // counted), with a deadline far past the longest pause.
  it('wrong one-time tokens count as OTT failures, the fifth as a lockout; attempts refused meanwhile as sign-in refusals', {
    timeout: 40_000,
  }, async () => {
    const counters = (text: string) => ({
      attempts: sample(text, 'latchkey_sign_in_attempts_total', { method: 'OTT' }),
      successes: sample(text, 'latchkey_sign_in_successes_total', { method: 'OTT' }),
      failures: sample(text, 'latchkey_sign_in_failures_total', { method: 'OTT' }),
      lockouts: sample(text, 'latchkey_sign_in_lockouts_total', { method: 'OTT' }),
      refusals: sample(text, 'latchkey_rate_limit_refusals_total', { limit: 'sign-in' }),
    });
    const before = counters(await scrape());
    const browser = new BrowserSession(base);
    let wrong = 0;
    let refused = 0;
    const token = `wrong-${randomUUID()}`;
    const deadline = performance.now() + 30_000;
    while (wrong < 5) {
      const answer = await browser.request('/login/ott', { form: { token } });
      if (answer.status === 401) wrong++;
      else if (answer.status === 429) {
        refused++;
        expect(Number(answer.headers.get('retry-after'))).toBeLessThanOrEqual(8);
        if (performance.now() > deadline) throw new Error(`still refused after ${refused} tries`);
        await new Promise((resolve) => setTimeout(resolve, 250)); // the pace of tries, not a wait for an event
      } else throw new Error(`unexpected ${answer.status}: ${answer.text}`);
    }
    const locked = await browser.request('/login/ott', { form: { token } });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(60);
    refused++;
    const text = await scrape();
    const after = counters(text);
    expect(after.failures - before.failures).toBe(5);
    expect(after.lockouts - before.lockouts).toBe(1);
    expect(after.successes - before.successes).toBe(0);
    expect(after.attempts - before.attempts).toBe(5 + refused);
    expect(after.refusals - before.refusals).toBe(refused);
    expect(text).not.toContain(token);
  });
});
