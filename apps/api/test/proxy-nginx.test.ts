import { randomBytes } from 'node:crypto';
import { onPostgres, runsHere } from '@latchkey/db/testing';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/browser-session.js';
import { NGINX, startNginx, type RunningNginx } from './support/nginx.js';
import { NodeBrowser, type NodeAnswer } from './support/node-browser.js';
import { demoAuthorization } from './support/oidc.js';
import { outboxOf } from './support/outbox.js';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';
import { overEventStream, overWebSocket, wsClient } from './support/subscriptions.js';
import { TestPki, type Issued } from './support/x509.js';

// Trusted proxies with a real reverse proxy: Debian's nginx on docs/examples/nginx.conf (TLS, WebSocket upgrade,
// no buffering for SSE, round robin over two instances) in front of two api processes on one PostgreSQL database.
// Clients send from addresses of their own (127.0.0.2, .3, ...; nginx's $remote_addr); nginx reaches the instances
// from 127.0.0.1, the only address they trust (TRUST_PROXY=127.0.0.1: with `loopback` every simulated client
// would count as a proxy too).

const CHANGED = 'subscription { documentChanged(organization: "acme") { kind document { title } } }';

/** Two instances share PostgreSQL, behind Debian's nginx. */
const behindNginx =
  onPostgres('the PostgreSQL-only tests') &&
  runsHere('the reverse-proxy tests', NGINX ? undefined : 'nginx is not installed (apt-get install nginx)');

describe.runIf(behindNginx)('two instances behind nginx terminating TLS (docs/examples/nginx.conf)', () => {
  let pki: TestPki;
  let authority: Issued;
  let processes: ServiceProcesses;
  let nginx: RunningNginx;
  let publicUrl: string;
  let tlsPort: number;
  let upstreams: [string, string];

  beforeAll(async () => {
    pki = new TestPki();
    authority = pki.authority('proxy-ca', '/CN=Latchkey Test Proxy CA');
    const certificate = pki.issue('proxy', authority, '/CN=localhost', ['DNS:localhost', 'IP:127.0.0.1']);
    tlsPort = await freePort();
    const httpPort = await freePort();
    publicUrl = `https://localhost:${tlsPort}`;
    processes = await startServiceProcesses(2, { PUBLIC_URL: publicUrl, TRUST_PROXY: '127.0.0.1' });
    upstreams = processes.urls.map((url) => new URL(url).host) as [string, string];
    nginx = await startNginx({
      tlsPort,
      httpPort,
      serverName: 'localhost',
      certFile: certificate.certFile,
      keyFile: certificate.keyFile,
      upstreams,
    });
  }, 90_000);
  afterAll(async () => {
    await nginx?.stop();
    await processes?.stop();
    pki?.remove();
  });

  /** A browser of its own at `from`, reaching PUBLIC_URL through nginx. */
  const browserAt = (from: string) =>
    new NodeBrowser(publicUrl, { connectTo: { host: '127.0.0.1', port: tlsPort }, from, ca: authority.cert });
  const servedBy = (answer: NodeAnswer) => nginx.upstreamOf(String(answer.headers['x-request-id']));
  /**
   * Round robin (one worker) alternates strictly: after a probe answered by the other instance, the next request
   * goes to `upstream`. The caller checks where its request really went.
   */
  async function steerTo(browser: NodeBrowser, upstream: string): Promise<void> {
    for (let i = 0; i < 3; i++) {
      if ((await servedBy(await browser.request('/healthz'))) !== upstream) return;
    }
    throw new Error('round robin never moved away from one instance');
  }
  const wrongToken = (browser: NodeBrowser, headers: Record<string, string> = {}) =>
    browser.request('/login/ott', { form: { token: 'A'.repeat(43) }, headers: { accept: 'application/json', ...headers } });

  it("limits apply per real client: one client's wrong tokens and link requests lock out that client only, whatever X-Forwarded-For it sends", async () => {
    const attacker = browserAt('127.0.0.2');
    const neighbour = browserAt('127.0.0.3');
    const served = new Set<string>();
    const statuses: number[] = [];
    // It claims to be its neighbour, and more: nginx appends its real address, which is what counts.
    for (const forged of ['127.0.0.3', '203.0.113.7, 127.0.0.3', '127.0.0.1']) {
      const answer = await wrongToken(attacker, { 'x-forwarded-for': forged, 'x-forwarded-host': 'evil.test' });
      statuses.push(answer.status);
      served.add(await servedBy(answer));
    }
    expect(statuses).toEqual([401, 401, 429]);
    expect(served).toEqual(new Set(upstreams));
    expect((await wrongToken(neighbour)).status).toBe(401);

    // Sign-in links: 20 per client address and 15 minutes; the 21st is refused, for that address only.
    const asker = browserAt('127.0.0.4');
    const generated: number[] = [];
    for (let i = 0; i < 21; i++) {
      generated.push(
        (
          await asker.request('/ott/generate', {
            json: { username: `nobody-${i}@nowhere.test` },
            headers: { 'x-forwarded-for': `198.51.100.${i}` },
          })
        ).status,
      );
    }
    expect(generated.slice(0, 20)).toEqual(Array(20).fill(202));
    expect(generated[20]).toBe(429);
    expect((await browserAt('127.0.0.5').request('/ott/generate', { json: { username: 'nobody-21@nowhere.test' } })).status).toBe(202);
  });

  it('with an https PUBLIC_URL every cookie is Secure, and a sign-in started through one instance completes through the other', async () => {
    const browser = browserAt('127.0.0.6');
    const outbox = outboxOf(processes.dataDir);
    const [first, second] = upstreams;

    const discovery = await browser.request('/.well-known/openid-configuration', { headers: { accept: 'application/json' } });
    expect(discovery.json).toMatchObject({
      issuer: publicUrl,
      authorization_endpoint: `${publicUrl}/oidc/auth`,
      token_endpoint: `${publicUrl}/oidc/token`,
    });

    const state = randomBytes(8).toString('hex');
    const application = demoAuthorization(publicUrl, { scope: 'openid email profile api', state });
    await steerTo(browser, first);
    const start = await browser.request(application.path);
    expect(start.status).toBe(303);
    expect(await servedBy(start)).toBe(first);
    const interaction = start.location!;
    expect((await browser.request(interaction)).status).toBe(200);
    const before = outbox.count();
    await steerTo(browser, first);
    const generate = await browser.request('/ott/generate', { form: { username: 'alice@acme.test' } });
    expect(generate.status).toBe(303);
    expect(await servedBy(generate)).toBe(first);
    const link = new URL((await outbox.next(before, 'alice@acme.test')).magicLink);
    expect(`${link.origin}${link.pathname}`).toBe(`${publicUrl}/login/ott`);

    // The link is used, and the sign-in finished, on the other instance.
    await steerTo(browser, second);
    const consumed = await browser.request('/login/ott', { form: { token: link.searchParams.get('token')! } });
    expect(consumed.status).toBe(303);
    expect(await servedBy(consumed)).toBe(second);
    expect(consumed.location).toBe(interaction);
    await steerTo(browser, second);
    const finished = await browser.request(interaction);
    expect(finished.status).toBe(303);
    expect(await servedBy(finished)).toBe(second);
    // The provider's own absolute URLs (the return to the authorization) are on PUBLIC_URL.
    expect(finished.location!.startsWith(`${publicUrl}/oidc/auth/`)).toBe(true);
    const resumed = await browser.request(finished.location!);
    expect(resumed.status).toBe(303);
    const callback = new URL(resumed.location!);
    expect(`${callback.origin}${callback.pathname}`).toBe(`${publicUrl}/callback`);
    expect(callback.searchParams.get('state')).toBe(state);
    const tokens = await browser.request('/oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: `${publicUrl}/callback`,
        client_id: 'latchkey-demo',
        code_verifier: application.verifier,
      },
      headers: { accept: 'application/json' },
    });
    expect(tokens.status).toBe(200);
    expect(decodeJwt(tokens.json.id_token)).toMatchObject({ iss: publicUrl, email: 'alice@acme.test', amr: ['otp'] });

    // The provider's (interaction, resume, session) and the application's cookies alike.
    const names = browser.setCookies.map((line) => line.slice(0, line.indexOf('=')));
    expect(names).toEqual(expect.arrayContaining(['_interaction', '_interaction_resume', '_session', 'lk_code']));
    for (const line of browser.setCookies) expect(line).toMatch(/;\s*secure(;|$)/i);
  });

  it('subscriptions work through nginx: graphql-ws over the upgraded connection, and SSE event by event', async () => {
    const token = await processes.token(await processes.userIdOf('alice@acme.test'));
    const ws = wsClient(`wss://127.0.0.1:${tlsPort}/graphql`, token, {
      headers: { host: `localhost:${tlsPort}`, origin: publicUrl },
      ca: authority.cert,
      servername: 'localhost',
      localAddress: '127.0.0.7',
    });
    const overWs = overWebSocket(ws, { query: CHANGED });
    const sse = browserAt('127.0.0.8');
    const overSse = overEventStream(
      (payload) => sse.open('/graphql', { json: payload, headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } }),
      { query: CHANGED },
    );
    const writer = browserAt('127.0.0.9');
    const create = async (title: string) => {
      const created = await writer.request('/graphql', {
        json: { query: `mutation { createDocument(input: { organization: "acme", title: "${title}" }) { document { id } } }` },
        headers: { authorization: `Bearer ${token}`, accept: 'application/graphql-response+json' },
      });
      expect(created.status).toBe(200);
    };
    // A subscription sees changes from the moment the server has registered it (no replay): warm up until both
    // streams have delivered something (a change every 150 ms, until a deadline far above any real latency), then
    // count.
    const warmUpUntil = performance.now() + 30_000;
    for (let i = 0; overWs.results.length === 0 || overSse.results.length === 0; i++) {
      if (performance.now() > warmUpUntil)
        throw new Error(`no event arrived through nginx (WebSocket ${overWs.results.length}, SSE ${overSse.results.length})`);
      await create(`Warm-up ${i}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    await create('Through the proxy');
    await create('Through the proxy again');
    const counted = (received: typeof overWs) =>
      received.results.map((result) => result.data?.documentChanged).filter((change) => !change?.document?.title.startsWith('Warm-up'));
    for (const received of [overWs, overSse]) {
      await expect.poll(() => counted(received).length, { timeout: 30_000, interval: 20 }).toBeGreaterThanOrEqual(2);
      expect(counted(received)).toEqual([
        { kind: 'CREATED', document: { title: 'Through the proxy' } },
        { kind: 'CREATED', document: { title: 'Through the proxy again' } },
      ]);
      expect(received.error).toBeUndefined();
    }
    overWs.dispose();
    overSse.dispose();
    await ws.dispose();
  });
});
