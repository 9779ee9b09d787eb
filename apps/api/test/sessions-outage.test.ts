import { randomUUID } from 'node:crypto';
import { onPostgres, startTcpProxy, type TcpProxy } from '@latchkey/db/testing';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnDatabase, postGraphQL, startTestService, type TestService } from './support/service.js';
import { overWebSocket, wsClient } from './support/subscriptions.js';

/** An access token as the provider issues it under a session: with a `sid`. */
async function tokenInSession(service: TestService, sessionId: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const { signingKey, config } = service;
  return new SignJWT({ scope: 'openid', amr: ['otp'], auth_time: now, client_id: 'latchkey-demo', sid: sessionId })
    .setProtectedHeader({ alg: signingKey.alg, kid: signingKey.kid, typ: 'at+jwt' })
    .setIssuer(config.tokens.issuer)
    .setAudience(config.tokens.audience)
    .setSubject(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .setJti(randomUUID())
    .sign(signingKey.key);
}

describe.runIf(onPostgres('the PostgreSQL-only tests'))('an instance that cannot read the ended sessions for 5 s', () => {
  let proxy: TcpProxy;
  let own: { url: string; drop(): Promise<void> };
  let service: TestService;
  /**
   * The ended-sessions list's clock: it stands still unless the test moves it, so the 5 s after the last good read
   * are the test's 5 s, not a loaded machine's (the rule itself, on the list alone: ended-sessions.test.ts).
   */
  let listClock = Date.now();

  beforeAll(async () => {
    own = await createOwnDatabase(process.env['DATABASE_URL']!);
    const target = new URL(own.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    service = await startTestService(
      { DATABASE_URL: proxy.routeUrl(own.url), DATABASE_TIMEOUT: '1s' },
      {
        outages: true,
        endedSessionsClock: () => listClock,
      },
    );
  });
  afterAll(async () => {
    await service?.stop();
    await proxy?.close();
    await own?.drop();
  });

  it('refuses sid-bearing tokens with SERVICE_UNAVAILABLE (503 under graphql-response+json) while tokens without a sid keep answering, and accepts them again once it can', async () => {
    const bound = await tokenInSession(service, 'session-0123456789');
    const unbound = await service.token(randomUUID());
    const viewer = (token: string) => postGraphQL(service.graphqlUrl, { query: '{ viewer { subject } }' }, { token });
    expect((await viewer(bound)).status).toBe(200);

    await proxy.drop();
    // The list is read every second: wait for the first read that fails (the instance says so once).
    const readFailed = () => service.logs.some((line) => String(line['msg']).startsWith('reading the ended sessions failed'));
    await expect.poll(readFailed, { timeout: 20_000, interval: 50 }).toBe(true);
    // Not refused at the first failed read, nor while the last good one is 5 s old...
    expect((await viewer(bound)).status).toBe(200);
    listClock += 5000;
    expect((await viewer(bound)).status).toBe(200);
    // ...but as soon as it is older.
    listClock += 1;
    const refused = await viewer(bound);
    expect(refused.status).toBe(503);
    expect(refused.json.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    expect(refused.json.data).toBeUndefined();
    expect(refused.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    // The database-free field still answers a caller whose token names no session.
    expect((await viewer(unbound)).status).toBe(200);
    // And over REST the same refusal.
    const rest = await fetch(`${service.url}/api/documents`, { headers: { authorization: `Bearer ${bound}` } });
    expect(rest.status).toBe(503);
    // And a WebSocket connection with it closes with 4500, saying so and nothing more.
    const socket = overWebSocket(wsClient(service.graphqlUrl, bound), { query: '{ viewer { subject } }' });
    await socket.ended();
    expect(socket.error).toMatchObject({ code: 4500, reason: 'Service unavailable: try again shortly.' });

    // Back: the next good read (the list's timer runs on real time) accepts them again.
    await proxy.restore();
    await expect.poll(async () => (await viewer(bound)).status, { timeout: 20_000, interval: 100 }).toBe(200);
    // (Its deadlines are far above any real latency: a loaded machine only makes it slower, never wrong.)
  }, 60_000);
});
