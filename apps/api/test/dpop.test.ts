import { seedDemoData } from '@latchkey/db';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dpopKey } from './support/dpop.js';
import { startLocalhostService, type TestService } from './support/service.js';
import { signInThroughDemo } from './support/sessions.js';
import { overWebSocket } from './support/subscriptions.js';

const VIEWER = '{ viewer { subject } }';
const ALGS = /, algs="[^"]*ES256[^"]*", resource_metadata="[^"]+"$/;

describe('DPoP-bound tokens (RFC 9449) at the API', () => {
  let service: TestService;
  let base: string;
  let key: Awaited<ReturnType<typeof dpopKey>>;
  let token: string;
  let browsers = 0;

  beforeAll(async () => {
    ({ service, base } = await startLocalhostService({ NODE_ENV: 'development', TRUST_PROXY: 'loopback' }));
    await seedDemoData(service.database);
    key = await dpopKey();
    const signedIn = await signInThroughDemo(base, service.config.dataDir, 'alice@acme.test', {
      forwardedFor: `192.0.2.${++browsers}`,
      tokenRequestProof: () => key.proof({ htm: 'POST', htu: `${base}/oidc/token` }),
    });
    expect(signedIn.tokenType).toBe('DPoP');
    token = signedIn.accessToken;
  }, 60_000);
  afterAll(() => service?.stop());

  /** POST /graphql with `Authorization: <scheme> <token>` and, when given, a `DPoP` header. */
  const post = async (proof: string | undefined, scheme = 'DPoP', query = VIEWER) => {
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        authorization: `${scheme} ${token}`,
        ...(proof ? { dpop: proof } : {}),
      },
      body: JSON.stringify({ query }),
    });
    return { status: response.status, challenge: response.headers.get('www-authenticate') ?? '', json: (await response.json()) as any };
  };
  const good = (htm = 'POST', path = '/graphql') => key.proof({ htm, htu: `${base}${path}`, accessToken: token });

  it('the provider binds the token to the key of the token request (cnf.jkt is its thumbprint)', () => {
    expect(decodeJwt(token)['cnf']).toEqual({ jkt: key.thumbprint });
  });

  it('with a good proof the token works over POST and GET /graphql, SSE and REST', async () => {
    const answer = await post(await good());
    expect(answer.status).toBe(200);
    expect(answer.json.data.viewer.subject).toBe(decodeJwt(token).sub);

    // GET: htu is the URL without its query.
    const get = await fetch(`${base}/graphql?query=${encodeURIComponent(VIEWER)}`, {
      headers: { accept: 'application/graphql-response+json', authorization: `DPoP ${token}`, dpop: await good('GET') },
    });
    expect(get.status).toBe(200);

    const sse = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `DPoP ${token}`, dpop: await good() },
      body: JSON.stringify({ query: 'subscription { documentChanged(organization: "acme") { kind } }' }),
    });
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toContain('text/event-stream');
    await sse.body?.cancel();

    const rest = await fetch(`${base}/api/documents?first=1`, {
      headers: { authorization: `DPoP ${token}`, dpop: await good('GET', '/api/documents') },
    });
    expect(rest.status).toBe(200);
  });

  it('over WebSocket the proof travels in connectionParams.dpop (GET, the URL of /graphql) and binds the connection', async () => {
    const proof = await key.proof({ htm: 'GET', htu: `${base}/graphql`, accessToken: token });
    const { createClient } = await import('graphql-ws');
    const WebSocket = (await import('ws')).default;
    const client = createClient({
      url: `${base.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `DPoP ${token}`, dpop: proof },
      retryAttempts: 0,
      lazy: true,
      // one connection for both operations: a new connection would need a new proof
      lazyCloseTimeout: 10_000,
    });
    const first = overWebSocket(client, { query: VIEWER });
    await first.ended();
    expect(first.results[0]?.data?.viewer?.subject).toBe(decodeJwt(token).sub);
    const second = overWebSocket(client, { query: VIEWER });
    await second.ended();
    expect(second.results[0]?.data?.viewer?.subject).toBe(decodeJwt(token).sub);
    await client.dispose();

    // Without a proof (or with one already used) the connection is refused.
    for (const params of [{ authorization: `DPoP ${token}` }, { authorization: `DPoP ${token}`, dpop: proof }]) {
      const refused = createClient({
        url: `${base.replace(/^http/, 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: params,
        retryAttempts: 0,
        lazy: true,
      });
      const attempt = overWebSocket(refused, { query: VIEWER });
      await attempt.ended();
      expect(attempt.results).toEqual([]);
      expect((attempt.error as { code?: number }).code).toBe(4403);
      await refused.dispose();
    }
  });

  it('refused with DPoP error="invalid_dpop_proof": no proof, another URL, another method, an old iat, a wrong ath, a replayed jti', async () => {
    const oldIat = Math.floor(Date.now() / 1000) - 120;
    const cases = {
      'no proof': undefined,
      'another URL': await key.proof({ htm: 'POST', htu: `${base}/api/documents`, accessToken: token }),
      'another method': await key.proof({ htm: 'GET', htu: `${base}/graphql`, accessToken: token }),
      'an old iat': await key.proof({ htm: 'POST', htu: `${base}/graphql`, accessToken: token, iat: oldIat }),
      'a wrong ath': await key.proof({ htm: 'POST', htu: `${base}/graphql`, ath: 'x'.repeat(43) }),
      'not a JWT': 'not-a-proof',
    };
    for (const [name, proof] of Object.entries(cases)) {
      const refused = await post(proof);
      expect(refused.status, name).toBe(401);
      expect(refused.json.errors[0].extensions.code, name).toBe('UNAUTHENTICATED');
      expect(refused.json.data, name).toBeUndefined();
      expect(refused.challenge, name).toMatch(/^DPoP error="invalid_dpop_proof"/);
      expect(refused.challenge, name).toMatch(ALGS);
    }
    const once = await good();
    expect((await post(once)).status).toBe(200);
    const replayed = await post(once);
    expect(replayed.status).toBe(401);
    expect(replayed.challenge).toMatch(/^DPoP error="invalid_dpop_proof"/);
  });

  it('refused with DPoP error="invalid_token": a proof signed by another key, and the bound token sent as Bearer (with or without a proof)', async () => {
    const stranger = await dpopKey();
    const otherKey = await post(await stranger.proof({ htm: 'POST', htu: `${base}/graphql`, accessToken: token }));
    expect(otherKey.status).toBe(401);
    expect(otherKey.challenge).toMatch(/^DPoP error="invalid_token"/);
    for (const proof of [undefined, await good()]) {
      const downgraded = await post(proof, 'Bearer');
      expect(downgraded.status).toBe(401);
      expect(downgraded.challenge).toMatch(/^DPoP error="invalid_token"/);
    }
    const rest = await fetch(`${base}/api/documents`, { headers: { authorization: `Bearer ${token}` } });
    expect(rest.status).toBe(401);
    expect(rest.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);
  });

  it('a bound token refreshes only with a proof from its key, and the new token is bound to the same key', async () => {
    const signedIn = await signInThroughDemo(base, service.config.dataDir, 'bob@acme.test', {
      forwardedFor: `192.0.2.${++browsers}`,
      tokenRequestProof: () => key.proof({ htm: 'POST', htu: `${base}/oidc/token` }),
    });
    const refresh = async (proof?: string) => {
      const response = await fetch(`${base}/oidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(proof ? { dpop: proof } : {}) },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: signedIn.refreshToken!, client_id: 'latchkey-demo' }),
      });
      return { status: response.status, json: (await response.json()) as { access_token?: string; error?: string } };
    };
    const stranger = await dpopKey();
    expect((await refresh(await stranger.proof({ htm: 'POST', htu: `${base}/oidc/token` }))).json.error).toBe('invalid_grant');
    const refreshed = await refresh(await key.proof({ htm: 'POST', htu: `${base}/oidc/token` }));
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.json.access_token!)['cnf']).toEqual({ jkt: key.thumbprint });
  });
});
