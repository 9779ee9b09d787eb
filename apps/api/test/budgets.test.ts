import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRest, demoOf, reseed, type Demo } from './support/demo.js';
import { overWebSocket, wsClient } from './support/subscriptions.js';
import { sample, scrapeMetrics } from './support/metrics.js';
import { testTempDir } from '@latchkey/db/testing';
import { getGraphQL, postGraphQL, startTestService, type TestService } from './support/service.js';

// Fair use (docs/graphql.md, "Budgets"): every caller spends a bucket of cost points that refills continuously.
const BUDGETS = {
  guest: { capacity: 50, restorePerSecond: 10 },
  // PRO refills slowly, so its figures can be added up request after request.
  plans: { FREE: { capacity: 300, restorePerSecond: 100 }, PRO: { capacity: 3000, restorePerSecond: 1 } },
};
const PAGE = '{ documents(first: 50) { edges { node { id title } } } }';
/** More than a FREE bucket ever holds: refused whenever it is sent, however much has refilled. */
const HUGE = '{ a: documents(first: 100) { edges { node { id title body status } } } b: documents(first: 100) { edges { node { id } } } }';
const ORIGIN = 'https://app.example.test';

let service: TestService;
let demo: Demo;
let url: string;

beforeAll(async () => {
  const file = join(testTempDir(), 'budgets.json');
  writeFileSync(file, JSON.stringify(BUDGETS));
  service = await startTestService({
    API_BUDGET_FILE: file,
    INTROSPECTION: 'open',
    CORS_ORIGINS: ORIGIN,
    TRUST_PROXY: 'loopback',
    METRICS_PORT: '0',
  });
  await reseed(service.database);
  demo = await demoOf(service);
  url = service.graphqlUrl;
});
afterAll(() => service?.close());

/** Sends `query` until the answer is refused; the refusal, and the last admitted answer before it. */
async function spendUntilRefused(query: string, token?: string, headers: Record<string, string> = {}) {
  let admitted: Awaited<ReturnType<typeof postGraphQL>> | undefined;
  for (let attempt = 0; attempt < 2000; attempt++) {
    const answer = await postGraphQL(url, { query }, { token, headers });
    if (answer.json.errors?.[0]?.extensions?.code === 'RATE_LIMITED') return { refused: answer, admitted };
    admitted = answer;
  }
  throw new Error('never refused');
}

describe('a budget per caller', () => {
  it("every response reports the caller's budget (extensions.cost, RateLimit fields); a short page is refunded what it did not use", async () => {
    const token = await demo.token('carol'); // ADMIN of globex, a FREE organization
    const first = await postGraphQL(url, { query: PAGE }, { token });
    expect(first.status).toBe(200);
    const cost = first.json.extensions.cost;
    expect(cost.throttleStatus).toMatchObject({ maximumAvailable: 300, restoreRate: 100 });
    expect(cost.actualQueryCost).toBeGreaterThanOrEqual(1);
    expect(cost.actualQueryCost).toBeLessThan(cost.requestedQueryCost); // globex has fewer than 50 documents
    // What refilled while it ran aside, the bucket lost the actual cost, not the requested one.
    expect(cost.throttleStatus.currentlyAvailable).toBeGreaterThanOrEqual(300 - cost.actualQueryCost);
    expect(cost.throttleStatus.currentlyAvailable).toBeLessThanOrEqual(300);
    expect(first.headers.get('ratelimit-policy')).toBe('"api-budget";q=300;w=3');
    expect(first.headers.get('ratelimit')).toMatch(/^"api-budget";r=\d+;t=\d+$/);
  });

  it('a FREE caller is refused once the budget is spent: 429 under graphql-response+json, 200 under json, RATE_LIMITED with Retry-After; admitted again once it has refilled', async () => {
    const token = await demo.token('carol');
    const { refused } = await spendUntilRefused(PAGE, token);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(300 / 100));
    const [error] = refused.json.errors;
    expect(error.extensions).toMatchObject({ code: 'RATE_LIMITED', exceedsCapacity: false, retryAfterSeconds: retryAfter });
    expect(refused.json.data).toBeUndefined();
    expect(refused.json.extensions.cost.actualQueryCost).toBe(1);

    const underJson = await postGraphQL(url, { query: HUGE }, { token, accept: 'application/json' });
    expect(underJson.status).toBe(200);
    expect(underJson.json.errors[0].extensions.code).toBe('RATE_LIMITED');

    // Operators see it: refusals by the budgets, by plan, beside what was admitted.
    const metrics = await scrapeMetrics(service.metricsUrl!);
    expect(sample(metrics, 'latchkey_rate_limit_refusals_total', { limit: 'api-budget', plan: 'FREE' })).toBeGreaterThanOrEqual(2);
    expect(sample(metrics, 'latchkey_budget_cost_admitted_total', { plan: 'FREE' })).toBeGreaterThan(0);

    // Told how long to wait, a client that waits that long is admitted.
    // (what the refusal under json charged, 1 point, refills in a hundredth of a second: within the margin)
    await new Promise((resolve) => setTimeout(resolve, (retryAfter + 0.2) * 1000));
    const again = await postGraphQL(url, { query: PAGE }, { token });
    expect(again.json.errors).toBeUndefined();
  });

  it('extensions.cost adds up request after request: what is available falls by each actual cost', async () => {
    const token = await demo.token('alice'); // PRO: 3000 points, 1 a second
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await postGraphQL(url, { query: PAGE }, { token })).json.extensions.cost);
    for (let i = 1; i < answers.length; i++) {
      const fell = answers[i - 1].throttleStatus.currentlyAvailable - answers[i].throttleStatus.currentlyAvailable;
      // one point may have refilled between two answers, and each figure is rounded down
      expect(Math.abs(fell - answers[i].actualQueryCost)).toBeLessThanOrEqual(2);
    }
  });

  it('a batch answers 200 with the refused operation in its own slot; each operation is charged', async () => {
    const token = await demo.token('carol');
    const batch = await postGraphQL(url, [{ query: '{ rateLimit { currentlyAvailable } }' }, { query: HUGE }], { token });
    expect(batch.status).toBe(200);
    expect(batch.json[0].errors).toBeUndefined();
    expect(batch.json[1].errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(batch.json[1].data).toBeUndefined();
  });

  it('two callers never share a budget, and a PRO caller has the larger one', async () => {
    const carol = await demo.token('carol');
    await spendUntilRefused(PAGE, carol);
    const alice = await postGraphQL(url, { query: PAGE }, { token: await demo.token('alice') }); // OWNER of acme, PRO
    expect(alice.json.errors).toBeUndefined();
    expect(alice.json.extensions.cost.throttleStatus.maximumAvailable).toBe(3000);
  });

  it('an operation costed above the capacity can never run: exceedsCapacity, no Retry-After', async () => {
    const token = await demo.token('carol');
    const answer = await postGraphQL(url, { query: HUGE }, { token });
    expect(answer.json.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', exceedsCapacity: true });
    expect(answer.headers.get('retry-after')).toBeNull();
  });

  it('a guest flooding { __typename } or introspection is refused (each operation costs at least 1); guests behind a trusted proxy are counted by their forwarded address', async () => {
    const flooder = { 'x-forwarded-for': '203.0.113.1' };
    const { refused } = await spendUntilRefused('{ __typename }', undefined, flooder);
    expect(refused.status).toBe(429);
    const introspection = await postGraphQL(url, { query: '{ __schema { queryType { name } } }' }, { headers: flooder });
    expect(introspection.json.errors[0].extensions.code).toBe('RATE_LIMITED');
    const neighbour = await postGraphQL(url, { query: '{ __typename }' }, { headers: { 'x-forwarded-for': '203.0.113.2' } });
    expect(neighbour.json.errors).toBeUndefined();
  });

  it('a publicly cacheable answer carries no figures; the same operation by POST does, and CORS exposes the fields', async () => {
    const cached = await getGraphQL(url, { query: '{ status { service } }' }, { headers: { 'x-forwarded-for': '198.51.100.9' } });
    expect(cached.headers.get('cache-control')).toMatch(/^public/);
    expect(cached.json.extensions).toBeUndefined();
    expect(cached.headers.get('ratelimit')).toBeNull();
    const token = await demo.token('alice');
    const posted = await postGraphQL(url, { query: '{ status { service } }' }, { token, headers: { origin: ORIGIN } });
    expect(posted.json.extensions.cost.requestedQueryCost).toBeGreaterThanOrEqual(1);
    expect(posted.headers.get('access-control-expose-headers')).toMatch(/ratelimit, ratelimit-policy, retry-after/);
  });

  it('REST spends the same bucket as GraphQL: a list by its page size; refused with 429 RATE_LIMITED and Retry-After', async () => {
    const token = await demo.token('erin'); // EDITOR of acme (PRO: 3000 points, 1 a second)
    const first = await callRest(service, 'GET', '/api/documents?first=100', { token });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toBe('"api-budget";q=3000;w=3000');
    const left = (answer: { headers: Headers }) => Number(/r=(\d+)/.exec(answer.headers.get('ratelimit') ?? '')?.[1]);
    expect(3000 - left(first)).toBeGreaterThanOrEqual(101);
    let refused: Awaited<ReturnType<typeof callRest>> | undefined;
    for (let attempt = 0; attempt < 100 && !refused; attempt++) {
      const answer = await callRest(service, 'GET', '/api/documents?first=100', { token });
      if (answer.status === 429) refused = answer;
    }
    expect(refused?.json).toMatchObject({ statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMITED', exceedsCapacity: false });
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The same bucket: GraphQL is refused too.
    const graphql = await postGraphQL(url, { query: PAGE }, { token });
    expect(graphql.json.errors[0].extensions.code).toBe('RATE_LIMITED');
  });

  it('a REST request refused before its handler runs costs 1, whatever its page size (as the route check in GraphQL)', async () => {
    const guest = { 'x-forwarded-for': '198.51.100.30' }; // a guest of its own (50 points, 10 a second)
    const left = (answer: { headers: Headers }) => Number(/r=(\d+)/.exec(answer.headers.get('ratelimit') ?? '')?.[1]);
    const signedOut = await callRest(service, 'GET', '/api/documents?first=40', { headers: guest });
    expect(signedOut.status).toBe(401);
    // admitted at 41, settled at 1 (and refilling since, 10 a second)
    expect(left(signedOut)).toBeGreaterThanOrEqual(49);
  });

  it('operations over graphql-ws spend the same bucket as over HTTP', async () => {
    const token = await demo.token('bob'); // VIEWER of acme (PRO)
    const client = wsClient(url, token);
    const startedAt = performance.now();
    try {
      let refusal: { errors?: { extensions?: Record<string, unknown> }[]; extensions?: Record<string, unknown> } | undefined;
      const query = '{ documents(first: 100) { edges { node { id title status body createdAt updatedAt owner { displayName } } } } }';
      for (let attempt = 0; attempt < 300 && refusal === undefined; attempt++) {
        const received = overWebSocket(client, { query });
        await received.ended();
        const [result] = received.results;
        if (result?.errors?.[0]?.extensions?.['code'] === 'RATE_LIMITED') refusal = result;
        else expect(result?.extensions).toMatchObject({ cost: { throttleStatus: { maximumAvailable: 3000 } } });
      }
      expect(refusal?.errors?.[0]?.extensions?.['code']).toBe('RATE_LIMITED');
      // Over HTTP the same bucket: short of the refused operation's cost but for what refilled since (1 a second).
      const requested = (refusal?.extensions?.['cost'] as { requestedQueryCost: number } | undefined)?.requestedQueryCost ?? 0;
      const overHttp = await postGraphQL(url, { query: '{ rateLimit { currentlyAvailable } }' }, { token });
      const refilled = (BUDGETS.plans.PRO.restorePerSecond * (performance.now() - startedAt)) / 1000;
      expect(overHttp.json.data.rateLimit.currentlyAvailable).toBeLessThan(requested + refilled);
    } finally {
      await client.dispose();
    }
  });

  it("Query.rateLimit answers the caller's budget without charging for it, alone or beside other fields, and is never publicly cached", async () => {
    const query = '{ rateLimit { maximumAvailable currentlyAvailable restoreRate plan } }';
    const token = await demo.token('root'); // the super-admin: a member of no organization, so FREE
    const first = await postGraphQL(url, { query }, { token });
    expect(first.json.data.rateLimit).toEqual({ maximumAvailable: 300, currentlyAvailable: 300, restoreRate: 100, plan: 'FREE' });
    expect(first.json.extensions.cost).toMatchObject({ requestedQueryCost: 0, actualQueryCost: 0 });
    for (let i = 0; i < 5; i++) await postGraphQL(url, { query }, { token });
    expect((await postGraphQL(url, { query }, { token })).json.data.rateLimit.currentlyAvailable).toBe(300);

    // Beside other fields it costs nothing either: the operation costs what the others do.
    const alone = await postGraphQL(url, { query: '{ status { service } }' }, { token });
    const beside = await postGraphQL(url, { query: `{ status { service } ${query.slice(1, -1)} }` }, { token });
    expect(beside.json.extensions.cost).toMatchObject({
      requestedQueryCost: alone.json.extensions.cost.requestedQueryCost,
      actualQueryCost: alone.json.extensions.cost.actualQueryCost,
    });

    const guest = await getGraphQL(url, { query }, { headers: { 'x-forwarded-for': '198.51.100.20' } });
    expect(guest.json.data.rateLimit).toMatchObject({ maximumAvailable: 50, plan: null });
    expect(guest.headers.get('cache-control')).toBe('no-store');
  });
});
