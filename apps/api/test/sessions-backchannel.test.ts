import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomToken } from '@latchkey/auth';
import { seedDemoData } from '@latchkey/db';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { outboxOf, tokenOf } from './support/outbox.js';
import { postGraphQL, startLocalhostService, type TestService } from './support/service.js';
import { COST_REPORTED } from './support/cost.js';

/** A relying party's back-channel logout endpoint: every logout token POSTed to it. */
async function logoutReceiver() {
  const received: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push(new URLSearchParams(body).get('logout_token') ?? '');
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('back-channel logout to clients that register a backchannel_logout_uri', () => {
  let service: TestService;
  let base: string;
  let receiver: Awaited<ReturnType<typeof logoutReceiver>>;

  beforeAll(async () => {
    receiver = await logoutReceiver();
    const client = {
      client_id: 'reports-app',
      redirect_uris: [`${receiver.url}/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      backchannel_logout_uri: `${receiver.url}/logout`,
      backchannel_logout_session_required: true,
      first_party: true,
    };
    ({ service, base } = await startLocalhostService({
      NODE_ENV: 'development',
      OIDC_CLIENTS: JSON.stringify([client]),
      // the relying party listens on loopback here
      OIDC_PRIVATE_NETWORK_FETCH: 'true',
    }));
    await seedDemoData(service.database);
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
  });

  it('ending a session sends the client a signed logout token (iss, aud, sub, sid, the back-channel event) naming the sid of its ID token', async () => {
    const verifier = randomToken();
    const browser = new BrowserSession(base);
    const params = new URLSearchParams({
      client_id: 'reports-app',
      response_type: 'code',
      redirect_uri: `${receiver.url}/callback`,
      scope: 'openid',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const start = await browser.request(`/oidc/auth?${params}`);
    await browser.request(start.location!);
    const outbox = outboxOf(service.config.dataDir);
    const before = outbox.count();
    await browser.request('/ott/generate', { form: { username: 'alice@acme.test' } });
    let location = (await browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, 'alice@acme.test')) } }))
      .location!;
    for (let hop = 0; hop < 5 && !location.startsWith(receiver.url); hop++) location = (await browser.request(location)).location!;
    const tokens = (await (
      await fetch(`${base}/oidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: new URL(location).searchParams.get('code')!,
          redirect_uri: `${receiver.url}/callback`,
          client_id: 'reports-app',
          code_verifier: verifier,
        }),
      })
    ).json()) as { access_token: string; id_token: string };
    const sessionId = decodeJwt(tokens.access_token)['sid'] as string;

    const ended = await postGraphQL(
      `${base}/graphql`,
      { query: 'mutation ($id: ID!) { endSession(id: $id) }', variables: { id: sessionId } },
      { token: tokens.access_token },
    );
    expect(ended.json).toEqual({ data: { endSession: true }, extensions: COST_REPORTED });
    await expect.poll(() => receiver.received.length, { timeout: 5000 }).toBe(1);
    const jwks = createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(receiver.received[0]!, jwks, { issuer: base, audience: 'reports-app' });
    expect(payload['events']).toEqual({ 'http://schemas.openid.net/event/backchannel-logout': {} });
    expect(payload.sub).toBe(decodeJwt(tokens.id_token).sub);
    expect(payload['sid']).toBe(decodeJwt(tokens.id_token)['sid']);
    expect(payload['nonce']).toBeUndefined();
  });
});
