import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { seedPgliteDataDir, testTempDir } from '@latchkey/db/testing';
import { persistedOperations, seedDemoData } from '@latchkey/db';
import CachePolicy from 'http-cache-semantics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COST_REPORTED } from './support/cost.js';
import { demoOf, type Demo } from './support/demo.js';
import { createOwnDatabase, databaseKind, startTestService, type TestService } from './support/service.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const apq = (query: string, version: unknown = 1) => ({ persistedQuery: { version, sha256Hash: sha256(query) } });
const RESPONSE_JSON = 'application/graphql-response+json';

interface Sent {
  method?: 'GET' | 'POST';
  body?: Record<string, unknown>;
  token?: string;
  accept?: string;
}

/** One GraphQL request as an HTTP client sends it; GET puts the parameters in the query string. */
async function call(service: TestService, { method = 'POST', body = {}, token, accept = RESPONSE_JSON }: Sent) {
  const headers: Record<string, string> = { accept };
  if (token) headers['authorization'] = `Bearer ${token}`;
  let url = service.graphqlUrl;
  let payload: string | undefined;
  if (method === 'GET') {
    const search = new URLSearchParams(
      Object.entries(body).map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)]),
    );
    url += `?${search}`;
  } else {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const response = await fetch(url, { method, headers, body: payload });
  return { url, requestHeaders: headers, method, status: response.status, headers: response.headers, json: (await response.json()) as any };
}

/** Judges a response as a shared cache would (RFC 9111, via http-cache-semantics). */
function sharedCachePolicy(answer: Awaited<ReturnType<typeof call>>) {
  return new CachePolicy(
    { url: answer.url, method: answer.method, headers: answer.requestHeaders },
    { status: answer.status, headers: Object.fromEntries(answer.headers) },
    { shared: true },
  );
}

const registered = async (service: TestService) =>
  (await service.database.db.select({ hash: persistedOperations.hash }).from(persistedOperations)).map((row) => row.hash);

describe('automatic persisted queries over HTTP (spec "Persisted-query extension", States and transitions)', () => {
  let service: TestService;
  let demo: Demo;
  beforeAll(async () => {
    service = await startTestService();
    await seedDemoData(service.database);
    demo = await demoOf(service);
  });
  afterAll(() => service?.stop());

  it('hash unknown -> PersistedQueryNotFound (404 under graphql-response+json, 200 under json, never cacheable); the retry with query registers; the hash alone then runs by POST and GET', async () => {
    const query = '{ status { service } }';
    for (const method of ['POST', 'GET'] as const) {
      const missing = await call(service, { method, body: { extensions: apq(query) } });
      expect(missing.status).toBe(404);
      expect(missing.json).toEqual({ errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] });
      expect(missing.headers.get('cache-control')).toBe('no-store');
      expect(sharedCachePolicy(missing).storable()).toBe(false);
    }
    const asJson = await call(service, { body: { extensions: apq(query) }, accept: 'application/json' });
    expect(asJson.status).toBe(200);
    expect(asJson.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');

    const registration = await call(service, { body: { query, extensions: apq(query) } });
    expect(registration.json).toEqual({ data: { status: { service: 'latchkey' } }, extensions: COST_REPORTED });
    expect(await registered(service)).toContain(sha256(query));
    for (const method of ['POST', 'GET'] as const) {
      // A credential-less GET of @public fields is publicly cacheable: it alone reports no cost.
      expect((await call(service, { method, body: { extensions: apq(query) } })).json).toEqual({
        data: { status: { service: 'latchkey' } },
        ...(method === 'POST' && { extensions: COST_REPORTED }),
      });
    }
  });

  it("no hash hijacking: text under another text's hash is 400 PERSISTED_QUERY_MISMATCH; version other than 1 is 400; nothing registers", async () => {
    const before = await registered(service);
    const mismatch = await call(service, { body: { query: '{ status { version } }', extensions: apq('{ status { serverTime } }') } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_MISMATCH');
    expect(
      (
        await call(service, {
          body: { query: '{ status { version } }', extensions: apq('{ status { serverTime } }') },
          accept: 'application/json',
        })
      ).status,
    ).toBe(400);
    const version = await call(service, { body: { query: '{ status { version } }', extensions: apq('{ status { version } }', 2) } });
    expect(version.status).toBe(400);
    expect(version.json.errors[0]).toMatchObject({
      message: 'extensions.persistedQuery.version must be 1.',
      extensions: { code: 'BAD_REQUEST' },
    });
    const invalid = '{ status { nope } }';
    expect((await call(service, { body: { query: invalid, extensions: apq(invalid) } })).status).toBe(400);
    expect(await registered(service)).toEqual(before);
  });

  it("documentId (the draft spec's sha256:<hex>): a registered one runs by GET and POST; an unknown one is PERSISTED_QUERY_NOT_FOUND; a malformed one 400", async () => {
    const query = '{ status { version } }';
    await call(service, { body: { query, extensions: apq(query) } });
    for (const method of ['GET', 'POST'] as const) {
      expect((await call(service, { method, body: { documentId: `sha256:${sha256(query)}` } })).json).toEqual({
        data: { status: { version: '0.1.0-test' } },
        ...(method === 'POST' && { extensions: COST_REPORTED }),
      });
    }
    const unknown = await call(service, { method: 'GET', body: { documentId: `sha256:${'e'.repeat(64)}` } });
    expect(unknown.status).toBe(404);
    expect(unknown.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await call(service, { body: { documentId: 'sha1:abc' } })).status).toBe(400);
    expect((await call(service, { body: { documentId: 42 } })).status).toBe(400);
  });

  it('skipping parse and validation never skips a check that depends on the caller, the cost limit, or the GET-mutation guard', async () => {
    const mine = '{ me { email } }';
    const alice = await demo.token('alice');
    expect((await call(service, { body: { query: mine, extensions: apq(mine) }, token: alice })).json).toEqual({
      data: { me: { email: 'alice@acme.test' } },
      extensions: COST_REPORTED,
    });
    const guest = await call(service, { body: { extensions: apq(mine) } });
    expect(guest.status).toBe(401);
    expect(guest.json.errors[0].extensions.code).toBe('UNAUTHENTICATED');

    // 2 + n x 65: 327 for a page of 5, 6,502 (over the limit of 5,000) for a page of 100.
    const paged =
      'query Page($n: Int) { documents(first: $n) { edges { node { id title owner { memberships { role organization { id name slug plan } } } } } } }';
    expect((await call(service, { body: { query: paged, variables: { n: 5 }, extensions: apq(paged) }, token: alice })).status).toBe(200);
    const costly = await call(service, { body: { variables: { n: 100 }, extensions: apq(paged) }, token: alice });
    expect(costly.status).toBe(400);
    expect(costly.json.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');

    const mutation = 'mutation Rename($id: ID!) { renamePasskey(id: $id, label: "x") { passkey { id } } }';
    await call(service, {
      body: { query: mutation, variables: { id: '00000000-0000-4000-8000-000000000000' }, extensions: apq(mutation) },
      token: alice,
    });
    const viaGet = await call(service, {
      method: 'GET',
      body: { variables: { id: '00000000-0000-4000-8000-000000000000' }, extensions: apq(mutation) },
      token: alice,
    });
    expect(viaGet.status).toBe(405);
  });
});

describe('caching (spec Authorization 14) judged by an RFC 9111 cache', () => {
  let service: TestService;
  let demo: Demo;
  beforeAll(async () => {
    service = await startTestService();
    await seedDemoData(service.database);
    demo = await demoOf(service);
  });
  afterAll(() => service?.stop());

  it('a credential-less GET of @public fields is public, max-age=60, with the Vary it depends on; the same cached entry is never served to a request with a credential', async () => {
    const answer = await call(service, { method: 'GET', body: { query: '{ status { service version } }' } });
    expect(answer.headers.get('cache-control')).toBe('public, max-age=60');
    expect(answer.headers.get('vary')).toBe('Accept, Origin, Authorization');
    const policy = sharedCachePolicy(answer);
    expect(policy.storable()).toBe(true);
    expect(policy.timeToLive()).toBeGreaterThan(59_000);
    expect(policy.timeToLive()).toBeLessThanOrEqual(60_000);
    expect(policy.satisfiesWithoutRevalidation({ url: answer.url, method: 'GET', headers: answer.requestHeaders })).toBe(true);
    const withCredential = {
      url: answer.url,
      method: 'GET',
      headers: { ...answer.requestHeaders, authorization: `Bearer ${await demo.token('bob')}` },
    };
    expect(policy.satisfiesWithoutRevalidation(withCredential)).toBe(false);
    // The other media type is another entry.
    expect(policy.satisfiesWithoutRevalidation({ url: answer.url, method: 'GET', headers: { accept: 'application/json' } })).toBe(false);
  });

  it("a shared cache keyed by URL cannot serve one user's record to another: signed-in answers are private, no-store (Vary: Authorization)", async () => {
    const query = '{ me { email } documents(first: 5) { edges { node { id title internalNotes } } } }';
    const cache = new Map<string, { policy: CachePolicy; body: unknown }>();
    const viaCache = async (token: string) => {
      const probe = await call(service, { method: 'GET', body: { query }, token });
      const cached = cache.get(probe.url);
      if (cached?.policy.satisfiesWithoutRevalidation({ url: probe.url, method: 'GET', headers: probe.requestHeaders })) return cached.body;
      const policy = sharedCachePolicy(probe);
      if (policy.storable()) cache.set(probe.url, { policy, body: probe.json });
      expect(probe.headers.get('cache-control')).toBe('private, no-store');
      expect(probe.headers.get('vary')).toContain('Authorization');
      return probe.json;
    };
    const alice = (await viaCache(await demo.token('alice'))) as any;
    const bob = (await viaCache(await demo.token('bob'))) as any;
    expect(alice.data.me.email).toBe('alice@acme.test');
    expect(bob.data.me.email).toBe('bob@acme.test');
    expect(cache.size).toBe(0);
  });

  it.each<[string, Sent & { signedIn?: boolean }]>([
    ['a POST', { method: 'POST', body: { query: '{ status { service } }' } }],
    ['a GET with errors', { method: 'GET', body: { query: '{ status { nope } }' } }],
    ['a guest GET of a signed-in field', { method: 'GET', body: { query: '{ viewer { subject } }' } }],
    ['PersistedQueryNotFound', { method: 'GET', body: { extensions: apq('{ status { serverTime } }') } }],
    ['a GET of @public fields with a credential', { method: 'GET', body: { query: '{ status { service } }' }, signedIn: true }],
  ])('%s is not stored by a shared cache', async (_name, sent) => {
    const token = sent.signedIn ? await demo.token('alice') : undefined;
    const answer = await call(service, { ...sent, token });
    expect(sharedCachePolicy(answer).storable()).toBe(false);
    expect(answer.headers.get('cache-control')).toMatch(/no-store/);
  });
});

describe('registration floods and restarts', () => {
  it('the store stays within its cap (least recently used go) and a client over its registration budget gets 429 with Retry-After; known hashes still run', async () => {
    const service = await startTestService({ PERSISTED_MAX_REGISTRATIONS: '5', PERSISTED_REGISTRATIONS_PER_MINUTE: '8' });
    try {
      const queries = Array.from({ length: 9 }, (_, n) => `{ n${n}: status { service } }`);
      for (const query of queries.slice(0, 8)) expect((await call(service, { body: { query, extensions: apq(query) } })).status).toBe(200);
      expect(await registered(service)).toHaveLength(5);
      const flood = await call(service, { body: { query: queries[8]!, extensions: apq(queries[8]!) } });
      expect(flood.status).toBe(429);
      expect(Number(flood.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(flood.json.errors[0].extensions.code).toBe('RATE_LIMITED');
      expect(await registered(service)).toHaveLength(5);
      expect(await registered(service)).not.toContain(sha256(queries[8]!));
      // The most recent registration is still served by hash, and plain text still runs.
      expect((await call(service, { body: { extensions: apq(queries[7]!) } })).status).toBe(200);
      expect((await call(service, { body: { query: queries[8]! } })).status).toBe(200);
    } finally {
      await service.stop();
    }
  });

  it('a registration made before a restart is served after it (same database)', async () => {
    const dataDir = testTempDir('pq-restart');
    const own = databaseKind === 'postgres' ? await createOwnDatabase(process.env['DATABASE_URL']!) : undefined;
    if (!own) seedPgliteDataDir(dataDir);
    const env = { DATA_DIR: dataDir, DATABASE_URL: own?.url };
    const query = '{ status { service version } }';
    try {
      const first = await startTestService(env);
      await call(first, { body: { query, extensions: apq(query) } });
      await first.stop();
      const second = await startTestService(env);
      try {
        expect((await call(second, { body: { extensions: apq(query) } })).json).toEqual({
          data: { status: { service: 'latchkey', version: '0.1.0-test' } },
          extensions: COST_REPORTED,
        });
      } finally {
        await second.stop();
      }
    } finally {
      await own?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
