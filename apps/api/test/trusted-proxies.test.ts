import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeBrowser, type NodeAnswer, type NodeRequestInit } from './support/node-browser.js';
import { demoAuthorization } from './support/oidc.js';
import { startLocalhostService, type TestService } from './support/service.js';
import { overWebSocket, wsClient } from './support/subscriptions.js';

// Trusted proxies, against one real service per TRUST_PROXY setting. 127.0.0.0/8 is all
// loopback: each simulated client or proxy sends from an address of its own, so the service sees different peers.
// The address the service computed is read back from its request log line (`ip`), found by the answer's request id.

const PROXY = '127.0.0.2';

interface Running {
  service: TestService;
  base: string;
  port: number;
}

async function start(env: Record<string, string>): Promise<Running> {
  const { service, base } = await startLocalhostService(env);
  return { service, base, port: Number(new URL(base).port) };
}

/** A request to the service from `from`, connecting to 127.0.0.1 whatever Host a test sends. */
function send(running: Running, target: string, from: string, init: NodeRequestInit = {}): Promise<NodeAnswer> {
  return new NodeBrowser(running.base, { connectTo: { host: '127.0.0.1', port: running.port }, from }).request(target, init);
}

/** The client address the service logged for an answer. */
function loggedIp(running: Running, answer: NodeAnswer): unknown {
  const line = running.service.logs.find((entry) => entry['msg'] === 'request' && entry['reqId'] === answer.headers['x-request-id']);
  expect(line, 'the request log line of this answer').toBeDefined();
  return line!['ip'];
}

const ipSeen = async (running: Running, from: string, headers: Record<string, string>) =>
  loggedIp(running, await send(running, '/healthz', from, { headers }));

/** Three wrong one-time tokens in a row: 401, 401, then 429 (paused after the second wrong one, spec One-time token login 4). */
async function wrongTokens(running: Running, from: string, headers: Record<string, string>[], count = 3): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    statuses.push(
      (
        await send(running, '/login/ott', from, {
          form: { token: 'A'.repeat(43) },
          headers: { accept: 'application/json', ...headers[i % headers.length] },
        })
      ).status,
    );
  }
  return statuses;
}

/** Starts an authorization request of the demo client: the provider answers with its interaction cookies. */
async function authorizationCookies(running: Running, from: string, headers: Record<string, string> = {}): Promise<string[]> {
  const answer = await send(running, demoAuthorization(running.base).path, from, { headers });
  expect(answer.status).toBe(303);
  expect(answer.setCookies.length).toBeGreaterThan(0);
  return answer.setCookies;
}
const allSecure = (cookies: string[]) => cookies.every((line) => /;\s*secure(;|$)/i.test(line));
const noneSecure = (cookies: string[]) => cookies.every((line) => !/;\s*secure(;|$)/i.test(line));

const FORGED = {
  host: 'evil.test',
  'x-forwarded-host': 'evil.test',
  'x-forwarded-proto': 'https',
  'x-forwarded-port': '8443',
  forwarded: 'host=evil.test;proto=https',
};

/** X-Forwarded-Host is never believed: discovery is the same whatever Host, X-Forwarded-Host or Forwarded host= say. */
async function expectDiscoveryFromPublicUrl(running: Running, from: string): Promise<void> {
  const honest = await send(running, '/.well-known/openid-configuration', from, { headers: { accept: 'application/json' } });
  const forged = await send(running, '/.well-known/openid-configuration', from, { headers: { accept: 'application/json', ...FORGED } });
  expect(honest.status).toBe(200);
  expect(forged.json).toEqual(honest.json);
  const urls = Object.values(honest.json as Record<string, unknown>).filter(
    (value): value is string => typeof value === 'string' && /^[a-z]+:\/\//.test(value),
  );
  expect(urls.length).toBeGreaterThan(5);
  for (const url of urls) expect(url === running.base || url.startsWith(`${running.base}/`)).toBe(true);
  expect(forged.text).not.toContain('evil.test');
}

describe("TRUST_PROXY unset, nobody's forwarded headers are believed", () => {
  // A service of its own for each block, stopped after it (with embedded PGlite each is hundreds of MiB).
  let plain: Running;
  beforeAll(async () => {
    plain = await start({});
  }, 60_000);
  afterAll(() => plain?.service.stop());

  it('a client sending X-Forwarded-Host: evil.test (or Host, or Forwarded host=) changes nothing: discovery stays on PUBLIC_URL', async () => {
    await expectDiscoveryFromPublicUrl(plain, '127.0.0.10');
  });

  it("a client's own X-Forwarded-For changes nothing: its wrong tokens lock out its real address, and the logs name that address", async () => {
    const claims: Record<string, string>[] = [
      { 'x-forwarded-for': '127.0.0.12' },
      { 'x-forwarded-for': '203.0.113.7, 127.0.0.12' },
      { 'x-forwarded-for': '198.51.100.1', forwarded: 'for=198.51.100.1' },
    ];
    expect(await wrongTokens(plain, '127.0.0.11', claims)).toEqual([401, 401, 429]);
    // The address it claimed to be is not locked out: its own first wrong token is an ordinary 401.
    expect(await wrongTokens(plain, '127.0.0.12', [{}], 1)).toEqual([401]);
    expect(await ipSeen(plain, '127.0.0.11', { 'x-forwarded-for': '198.51.100.1' })).toBe('127.0.0.11');
  });

  it("a client's X-Forwarded-Proto: https does not make the provider's cookies Secure", async () => {
    expect(noneSecure(await authorizationCookies(plain, '127.0.0.13', { 'x-forwarded-proto': 'https' }))).toBe(true);
  });
});

describe(`TRUST_PROXY=${PROXY}, X-Forwarded-For of that proxy only`, () => {
  // A dual-stack listener: IPv4 peers arrive as ::ffff:a.b.c.d and must count as a.b.c.d.
  let trusting: Running;
  beforeAll(async () => {
    trusting = await start({ HOST: '::', TRUST_PROXY: PROXY, PERSISTED_REGISTRATIONS_PER_MINUTE: '2' });
  }, 60_000);
  afterAll(() => trusting?.service.stop());

  it('X-Forwarded-Host from the trusted proxy itself is not believed either: discovery stays on PUBLIC_URL', async () => {
    await expectDiscoveryFromPublicUrl(trusting, PROXY);
  });

  it('the chain is walked from the right and stops at the first untrusted hop; ::ffff:a.b.c.d counts as a.b.c.d', async () => {
    expect(await ipSeen(trusting, PROXY, { 'x-forwarded-for': '203.0.113.50' })).toBe('203.0.113.50');
    // The client's own entries are on the left: the first hop that is no trusted proxy, from the right, is the client.
    expect(await ipSeen(trusting, PROXY, { 'x-forwarded-for': '203.0.113.50, 198.51.100.7, 127.0.0.2' })).toBe('198.51.100.7');
    expect(await ipSeen(trusting, PROXY, { 'x-forwarded-for': '::ffff:203.0.113.9' })).toBe('203.0.113.9');
    expect(await ipSeen(trusting, PROXY, { 'x-forwarded-for': '2001:DB8:0::7' })).toBe('2001:db8::7');
    // A hop that is no IP address ends the walk at the proxy that passed it on.
    expect(await ipSeen(trusting, PROXY, { 'x-forwarded-for': '198.51.100.7, unknown' })).toBe(PROXY);
    expect(await ipSeen(trusting, PROXY, { 'x-forwarded-for': '198.51.100.7:4711' })).toBe(PROXY);
    expect(await ipSeen(trusting, PROXY, {})).toBe(PROXY);
    // Only the listed proxy: another peer's header counts for nothing, and its mapped address is logged as IPv4.
    expect(await ipSeen(trusting, '127.0.0.20', { 'x-forwarded-for': '198.51.100.7' })).toBe('127.0.0.20');
    // RFC 7239 Forwarded is not read unless TRUST_PROXY_HEADER=forwarded.
    expect(await ipSeen(trusting, PROXY, { forwarded: 'for=198.51.100.7' })).toBe(PROXY);
  });

  it("limits apply per forwarded client: one client's wrong tokens lock out that client only, not the proxy's other clients", async () => {
    expect(await wrongTokens(trusting, PROXY, [{ 'x-forwarded-for': '203.0.113.1' }])).toEqual([401, 401, 429]);
    expect(await wrongTokens(trusting, PROXY, [{ 'x-forwarded-for': '203.0.113.2' }], 1)).toEqual([401]);
    // The locked-out client cannot step out of its lockout by adding an address of its choice on the left.
    expect(await wrongTokens(trusting, PROXY, [{ 'x-forwarded-for': '203.0.113.3, 203.0.113.1' }], 1)).toEqual([429]);
    // A client that connects directly cannot claim a locked-out client's address either (nor escape its own).
    expect(await wrongTokens(trusting, '127.0.0.21', [{ 'x-forwarded-for': '203.0.113.1' }], 1)).toEqual([401]);
  });

  it("the trusted proxy's X-Forwarded-Proto makes the provider's cookies Secure: its last value counts, none means this connection's scheme", async () => {
    expect(
      allSecure(await authorizationCookies(trusting, PROXY, { 'x-forwarded-for': '203.0.113.60', 'x-forwarded-proto': 'https' })),
    ).toBe(true);
    expect(
      allSecure(await authorizationCookies(trusting, PROXY, { 'x-forwarded-for': '203.0.113.60', 'x-forwarded-proto': 'http, https' })),
    ).toBe(true);
    expect(
      noneSecure(await authorizationCookies(trusting, PROXY, { 'x-forwarded-for': '203.0.113.60', 'x-forwarded-proto': 'https, http' })),
    ).toBe(true);
    expect(noneSecure(await authorizationCookies(trusting, PROXY, { 'x-forwarded-for': '203.0.113.60' }))).toBe(true);
    expect(noneSecure(await authorizationCookies(trusting, '127.0.0.22', { 'x-forwarded-proto': 'https' }))).toBe(true);
  });

  const apq = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') } });
  const register = (query: string, forwardedFor: string) =>
    send(trusting, '/graphql', PROXY, {
      json: { query, extensions: apq(query) },
      headers: { accept: 'application/graphql-response+json', 'x-forwarded-for': forwardedFor },
    });

  it('the APQ registration budget counts per forwarded client, over HTTP and over WebSocket alike', async () => {
    expect((await register('{ a1: status { service } }', '203.0.113.70')).status).toBe(200);
    expect((await register('{ a2: status { service } }', '203.0.113.70')).status).toBe(200);
    const refused = await register('{ a3: status { service } }', '203.0.113.70');
    expect([refused.status, refused.json.errors[0].extensions.code]).toEqual([429, 'RATE_LIMITED']);
    expect((await register('{ b1: status { service } }', '203.0.113.71')).status).toBe(200);

    const overSocket = async (query: string, forwardedFor: string) => {
      const client = wsClient(`http://127.0.0.1:${trusting.port}/graphql`, undefined, {
        headers: { 'x-forwarded-for': forwardedFor },
        localAddress: PROXY,
      });
      const received = overWebSocket(client, { query, extensions: apq(query) });
      await received.ended();
      await client.dispose();
      return received;
    };
    const socketRefused = await overSocket('{ a4: status { service } }', '203.0.113.70');
    expect((socketRefused.error as { extensions?: { code?: string } }[])[0]?.extensions?.code).toBe('RATE_LIMITED');
    const socketServed = await overSocket('{ c1: status { service } }', '203.0.113.72');
    expect(socketServed.error).toBeUndefined();
    expect(socketServed.results[0]?.data).toEqual({ c1: { service: 'latchkey' } });
  });
});

describe(`TRUST_PROXY_HEADER=forwarded reads RFC 7239 Forwarded instead, never both`, () => {
  let forwarded: Running;
  beforeAll(async () => {
    forwarded = await start({ TRUST_PROXY: PROXY, TRUST_PROXY_HEADER: 'forwarded' });
  }, 60_000);
  afterAll(() => forwarded?.service.stop());

  it('Host, X-Forwarded-Host and Forwarded host= from the trusted proxy are not believed: discovery stays on PUBLIC_URL', async () => {
    await expectDiscoveryFromPublicUrl(forwarded, PROXY);
  });

  it('Forwarded for= and proto= of the trusted proxy count; its X-Forwarded-For does not', async () => {
    expect(await ipSeen(forwarded, PROXY, { forwarded: 'for=198.51.100.7;proto=https' })).toBe('198.51.100.7');
    expect(
      await ipSeen(forwarded, PROXY, { forwarded: 'for=203.0.113.50, for="[2001:db8:cafe::17]:4711";proto=https, for=127.0.0.2' }),
    ).toBe('2001:db8:cafe::17');
    expect(await ipSeen(forwarded, PROXY, { forwarded: 'for="198.51.100.7:47011"' })).toBe('198.51.100.7');
    expect(await ipSeen(forwarded, PROXY, { forwarded: 'for=unknown' })).toBe(PROXY);
    expect(await ipSeen(forwarded, PROXY, { forwarded: 'for=198.51.100.7;;;' })).toBe(PROXY);
    expect(await ipSeen(forwarded, PROXY, { 'x-forwarded-for': '198.51.100.7' })).toBe(PROXY);
    expect(await ipSeen(forwarded, '127.0.0.30', { forwarded: 'for=198.51.100.7' })).toBe('127.0.0.30');
    expect(allSecure(await authorizationCookies(forwarded, PROXY, { forwarded: 'for=198.51.100.8;proto=https' }))).toBe(true);
    expect(noneSecure(await authorizationCookies(forwarded, PROXY, { forwarded: 'for=198.51.100.8', 'x-forwarded-proto': 'https' }))).toBe(
      true,
    );
  });
});
