import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKind, getGraphQL, postGraphQL, startTestService, type TestService } from './support/service.js';
import { onPostgres, startTcpProxy } from '@latchkey/db/testing';
import { COST_REPORTED } from './support/cost.js';

describe('operational endpoints', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service?.stop());

  it('/healthz answers 200 while the process is up', async () => {
    const res = await fetch(`${service.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('/readyz answers 200 while the database is reachable', async () => {
    const res = await fetch(`${service.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', database: databaseKind });
  });

  it('/.well-known/jwks.json serves the public key set only', async () => {
    const res = await fetch(`${service.url}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/jwk-set+json');
    const jwks = (await res.json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: service.signingKey.kid });
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(jwks.keys[0]).not.toHaveProperty(member);
  });

  it('x-request-id: a well-formed incoming id is echoed, a missing or malformed one is replaced', async () => {
    const given = await fetch(`${service.url}/healthz`, { headers: { 'x-request-id': 'trace-123.abc' } });
    expect(given.headers.get('x-request-id')).toBe('trace-123.abc');
    const fresh = await fetch(`${service.url}/healthz`);
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const hostile = await fetch(`${service.url}/healthz`, { headers: { 'x-request-id': 'a\tb<script>' } });
    expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const gql = await postGraphQL(service.graphqlUrl, { query: '{ __typename }' }, { headers: { 'x-request-id': 'gql-1' } });
    expect(gql.headers.get('x-request-id')).toBe('gql-1');
  });

  it('structured JSON logs carry the request id and never a token, a query string or a variable value', async () => {
    const token = await service.token('log-user');
    await postGraphQL(
      service.graphqlUrl,
      { query: 'query ($s: Boolean!) { viewer @skip(if: $s) { subject } }', variables: { s: false, secret: 'VARIABLE-SECRET-42' } },
      { token, headers: { 'x-request-id': 'log-check-1' } },
    );
    await getGraphQL(
      service.graphqlUrl,
      { query: '{ __typename }', variables: JSON.stringify({ v: 'QUERYSTRING-SECRET-7' }) },
      { headers: { 'x-request-id': 'log-check-2' } },
    );
    await fetch(`${service.url}/healthz?token=URL-TOKEN-SECRET`);
    const line = service.logs.find((entry) => entry['reqId'] === 'log-check-1');
    expect(line).toMatchObject({ msg: 'request', method: 'POST', path: '/graphql', status: 200 });
    const get = service.logs.find((entry) => entry['reqId'] === 'log-check-2');
    expect(get).toMatchObject({ path: '/graphql', method: 'GET' });
    const text = service.logText();
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.split('.')[2]!);
    expect(text).not.toContain('VARIABLE-SECRET-42');
    expect(text).not.toContain('QUERYSTRING-SECRET-7');
    expect(text).not.toContain('URL-TOKEN-SECRET');
  });

  it('spec Authorization 14: only a credential-less GET of @public fields may be stored by shared caches; signed-in answers are private', async () => {
    const guest = await getGraphQL(service.graphqlUrl, { query: '{ status { service } }' });
    expect(guest.headers.get('x-content-type-options')).toBe('nosniff');
    expect(guest.headers.get('cache-control')).toBe('public, max-age=60');
    expect(guest.headers.get('vary')).toBe('Accept, Origin, Authorization');
    expect((await postGraphQL(service.graphqlUrl, { query: '{ status { service } }' })).headers.get('cache-control')).toBe('no-store');
    expect((await getGraphQL(service.graphqlUrl, { query: '{ viewer { subject } }' })).headers.get('cache-control')).toBe('no-store');
    const token = await service.token('cache-user');
    const member = await getGraphQL(service.graphqlUrl, { query: '{ viewer { subject } }' }, { token });
    expect(member.headers.get('cache-control')).toBe('private, no-store');
    expect(member.headers.get('vary')).toContain('Authorization');
  });
});

describe('spec Cross-site 3: the query IDE and introspection', () => {
  it('development: GraphiQL is served for Accept: text/html and introspection is open to guests', async () => {
    const service = await startTestService({ NODE_ENV: 'development' });
    try {
      const page = await fetch(service.graphqlUrl, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(await page.text()).toContain('Latchkey GraphQL');
      const res = await postGraphQL(service.graphqlUrl, { query: getIntrospectionQuery() });
      expect(res.status).toBe(200);
      expect(res.json.data.__schema.queryType.name).toBe('Query');
    } finally {
      await service.stop();
    }
  });

  it('production: no HTML page, introspection only for signed-in callers, the JSON endpoint stays open', async () => {
    const service = await startTestService({ NODE_ENV: 'production' });
    try {
      const page = await fetch(service.graphqlUrl, { headers: { accept: 'text/html' } });
      expect(page.headers.get('content-type') ?? '').not.toContain('text/html');
      expect(page.status).toBeGreaterThanOrEqual(400);
      expect(page.status).toBeLessThan(500);
      const guest = await postGraphQL(service.graphqlUrl, { query: getIntrospectionQuery() });
      expect(guest.status).toBe(401);
      expect(guest.json.errors[0].extensions.code).toBe('UNAUTHENTICATED');
      expect(guest.json.data).toBeUndefined();
      const guestType = await postGraphQL(service.graphqlUrl, { query: '{ __type(name: "Viewer") { name } }' });
      expect(guestType.status).toBe(401);
      const token = await service.token('dev-1');
      const member = await postGraphQL(service.graphqlUrl, { query: getIntrospectionQuery() }, { token });
      expect(member.status).toBe(200);
      expect(member.json.data.__schema.types.length).toBeGreaterThan(5);
      const status = await postGraphQL(service.graphqlUrl, { query: '{ status { service } __typename }' });
      expect(status.json).toEqual({ data: { status: { service: 'latchkey' }, __typename: 'Query' }, extensions: COST_REPORTED });
    } finally {
      await service.stop();
    }
  });

  it('GraphiQL off, an Accept allowing no JSON type gets 406 with a JSON body naming the accepted types; one with */* gets the usual 400', async () => {
    const service = await startTestService({ NODE_ENV: 'production' });
    try {
      for (const accept of ['text/html', 'text/html, application/xhtml+xml', 'text/plain']) {
        const page = await fetch(service.graphqlUrl, { headers: { accept } });
        expect(page.status).toBe(406);
        expect(page.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(await page.json()).toEqual({
          errors: [
            {
              message: expect.stringMatching(/application\/graphql-response\+json.*application\/json/),
              extensions: { code: 'BAD_REQUEST' },
            },
          ],
        });
      }
      // What a browser sends when the address is typed in: */* allows JSON, so the request is judged as a GraphQL request.
      for (const accept of ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', '*/*']) {
        const browser = await fetch(service.graphqlUrl, { headers: { accept } });
        expect(browser.status).toBe(400);
        expect(browser.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect((await browser.json()).errors[0]).toMatchObject({
          message: expect.stringContaining('Missing parameter "query"'),
          extensions: { code: 'BAD_REQUEST' },
        });
      }
    } finally {
      await service.stop();
    }
  });

  it('INTROSPECTION=off refuses introspection for everyone as a validation failure', async () => {
    const service = await startTestService({ INTROSPECTION: 'off' });
    try {
      const token = await service.token('dev-1');
      const res = await postGraphQL(service.graphqlUrl, { query: '{ __schema { queryType { name } } }' }, { token });
      expect(res.status).toBe(400);
      expect(res.json.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      const plain = await postGraphQL(service.graphqlUrl, { query: '{ __typename viewer { subject } }' }, { token });
      expect(plain.json.data).toEqual({ __typename: 'Query', viewer: { subject: 'dev-1' } });
    } finally {
      await service.stop();
    }
  });
});

describe('readiness follows the database', () => {
  it.runIf(onPostgres('the PostgreSQL-only tests'))(
    '/readyz answers 503 while PostgreSQL is unreachable and 200 when it is back',
    async () => {
      const target = new URL(process.env['DATABASE_URL']!);
      const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
      const service = await startTestService({ DATABASE_URL: proxy.routeUrl(target.toString()) });
      try {
        expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
        await proxy.drop();
        const down = await fetch(`${service.url}/readyz`);
        expect(down.status).toBe(503);
        expect(await down.json()).toEqual({ statusCode: 503, message: 'The database is unreachable.', error: 'Service Unavailable' });
        // liveness is independent of the database
        expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
        await proxy.restore();
        // Back without a restart: readiness is asked until it answers 200, with a deadline far above a reconnection.
        await expect.poll(async () => (await fetch(`${service.url}/readyz`)).status, { timeout: 30_000, interval: 100 }).toBe(200);
      } finally {
        await service.stop();
        await proxy.close();
      }
    },
  );
  if (databaseKind === 'pglite') {
    it('(skipped on PGlite: the embedded database lives in this process and cannot become unreachable)', () => {
      process.stdout.write('[latchkey tests] readiness-outage test skipped: needs PostgreSQL (DATABASE_URL)\n');
    });
  }
});
