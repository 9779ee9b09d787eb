import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { hasChromium, launchChromium, signInAtProvider } from './support/chromium.js';
import { COST_REPORTED } from './support/cost.js';
import type { outboxOf } from './support/outbox.js';
import {
  authorizationRequest,
  cspViolations,
  discover,
  type RelyingPartyServer,
  startProviderFor,
  startRelyingParty,
} from './support/relying-party.js';
import { postGraphQL, type TestService } from './support/service.js';
import { foreignTokenRequestPage, singlePageApp } from './support/single-page-app.js';

describe.runIf(hasChromium)('a single-page app and a native app on other origins sign in, call the API and sign out (Chromium)', () => {
  let service: TestService;
  let base: string;
  let browser: Browser;
  let spa: RelyingPartyServer;
  let elsewhere: RelyingPartyServer;
  let loopbacks: RelyingPartyServer[];
  let outbox: ReturnType<typeof outboxOf>;
  let native: oidc.Configuration;

  beforeAll(async () => {
    [spa, elsewhere, ...loopbacks] = await Promise.all([
      startRelyingParty(),
      startRelyingParty(),
      startRelyingParty(),
      startRelyingParty(),
    ]);
    const clients = [
      {
        client_id: 'spa',
        token_endpoint_auth_method: 'none',
        redirect_uris: [`${spa.origin}/app/callback`],
        post_logout_redirect_uris: [`${spa.origin}/signed-out`],
        first_party: true,
      },
      {
        // RFC 8252: a command-line app with a loopback redirect; the port is the one it listens on at the time.
        client_id: 'cli-app',
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        redirect_uris: ['http://127.0.0.1/cb'],
        post_logout_redirect_uris: ['http://127.0.0.1/signed-out'],
        first_party: true,
      },
      // A web client with a loopback redirect keeps exact matching: another port is another URI.
      {
        client_id: 'web-loopback',
        client_secret: 'web-loopback-secret-long-enough-0123456789',
        redirect_uris: [`${loopbacks[0]!.origin}/cb`],
        first_party: true,
      },
    ];
    // The single-page app calls /graphql from its own origin.
    ({ service, base, outbox } = await startProviderFor(clients, { CORS_ORIGINS: spa.origin }));
    native = await discover(base, 'cli-app');
    const app = { issuer: base, clientId: 'spa', redirectUri: `${spa.origin}/app/callback`, graphql: `${base}/graphql` };
    spa.servePage('/app/', singlePageApp(app));
    spa.servePage('/app/callback', singlePageApp(app));
    elsewhere.servePage('/', foreignTokenRequestPage(`${base}/oidc/token`, 'spa'));
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await Promise.all([spa, elsewhere, ...(loopbacks ?? [])].map((server) => server?.close()));
  });

  const outOf = async (page: Page) => {
    await expect.poll(() => page.locator('#out').textContent(), { timeout: 20_000 }).not.toBe('');
    return JSON.parse((await page.locator('#out').textContent())!) as Record<string, unknown>;
  };

  it('the single-page app exchanges its code and refreshes with fetch from its own page (token endpoint CORS for its origin), then calls userinfo and /graphql (CORS_ORIGINS)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations = cspViolations(page);
    await page.goto(`${spa.origin}/app/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/interaction\//);
    await signInAtProvider(page, outbox, 'bob@acme.test', 'code');
    await Promise.race([page.waitForURL(`${spa.origin}/app/callback**`), violations.first]);
    const result = await outOf(page);
    expect(result).toMatchObject({
      email: 'bob@acme.test',
      refreshedEmail: 'bob@acme.test',
      rotated: true,
      userinfo: { email: 'bob@acme.test', email_verified: true },
    });
    expect(String(result['scope']).split(' ').sort()).toEqual(['api', 'email', 'openid']);

    // The actual POST from a registered origin is readable; from any other it gets no Access-Control-Allow-Origin.
    const tokenCall = (origin: string) =>
      fetch(`${base}/oidc/token`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'not-a-token', client_id: 'spa' }),
      });
    const registered = await tokenCall(spa.origin);
    expect(registered.headers.get('access-control-allow-origin')).toBe(spa.origin);
    expect((await registered.json()).error).toBe('invalid_grant');
    const foreign = await tokenCall(elsewhere.origin);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    expect(foreign.status).toBe(400);
    expect((await foreign.json()).error).toBe('invalid_request');
    // ... and a page there cannot read the answer at all.
    const other = await context.newPage();
    await other.goto(`${elsewhere.origin}/`);
    await expect.poll(() => other.locator('#out').textContent()).toBe('blocked: TypeError');

    // Signing out from the app returns to it.
    const signOut = new URL(`${base}/oidc/session/end`);
    signOut.search = new URLSearchParams({
      client_id: 'spa',
      id_token_hint: String(result['idToken']),
      post_logout_redirect_uri: `${spa.origin}/signed-out`,
    }).toString();
    await page.goto(signOut.href);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await Promise.race([page.waitForURL(`${spa.origin}/signed-out`), violations.first]);
    expect((await postGraphQL(`${base}/graphql`, { query: '{ me { email } }' }, { token: String(result['accessToken']) })).status).toBe(
      401,
    );
    expect(violations.list).toEqual([]);
    await context.close();
  });

  it('the native app (RFC 8252) signs in through two loopback ports registered as one, calls the API and signs out back to its loopback port', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations = cspViolations(page);
    let idToken = '';
    for (const [index, loopback] of loopbacks.entries()) {
      const request = await authorizationRequest(native, { redirect_uri: `${loopback.origin}/cb`, scope: 'openid api' });
      await page.goto(request.url.href);
      // The first sign-in asks who it is; the second finds the browser signed in and comes straight back.
      if (index === 0) {
        await page.waitForURL(/\/interaction\//);
        await signInAtProvider(page, outbox, 'alice@acme.test', 'link');
      }
      const tokens = await oidc.authorizationCodeGrant(
        native,
        await Promise.race([loopback.callbackFor(request.checks.expectedState), violations.first]),
        request.checks,
      );
      expect(decodeJwt(tokens.access_token)).toMatchObject({ client_id: 'cli-app' });
      const answer = await postGraphQL(`${base}/graphql`, { query: '{ me { email } }' }, { token: tokens.access_token });
      expect(answer.json).toEqual({ data: { me: { email: 'alice@acme.test' } }, extensions: COST_REPORTED });
      idToken = tokens.id_token!;
    }
    const back = `${loopbacks[1]!.origin}/signed-out`;
    await page.goto(oidc.buildEndSessionUrl(native, { id_token_hint: idToken, post_logout_redirect_uri: back }).href);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await Promise.race([page.waitForURL(back), violations.first]);
    expect(violations.list).toEqual([]);
    await context.close();
  });

  it("a sign-in page's form-action names 'self' and the origin where this browser's pending request returns, never another client's; 'self' alone without one", async () => {
    const formAction = (answer: { headers: Headers }) =>
      /form-action ([^;]*)/.exec(answer.headers.get('content-security-policy') ?? '')?.[1];
    const visitor = new BrowserSession(base);
    expect(formAction(await visitor.request('/login/ott'))).toBe("'self'");
    const started = await visitor.request(
      `/oidc/auth?${new URLSearchParams({
        client_id: 'spa',
        response_type: 'code',
        redirect_uri: `${spa.origin}/app/callback`,
        scope: 'openid',
        code_challenge: 'x'.repeat(43),
        code_challenge_method: 'S256',
      })}`,
    );
    expect(formAction(await visitor.request(started.location!))).toBe(`'self' ${spa.origin}`);
    expect(formAction(await visitor.request('/login/ott'))).toBe(`'self' ${spa.origin}`);
    expect(formAction(await visitor.request('/login/factors'))).toBeUndefined(); // no sign-in in progress: 303 to /login
    // A pending-request cookie that names no interaction widens nothing.
    const forged = new BrowserSession(base);
    forged.cookies.set('lk_login', 'A'.repeat(21));
    expect(formAction(await forged.request('/login/ott'))).toBe("'self'");
  });

  it('wrong input from relying parties: an unregistered redirect_uri (a web client on another port, a native one on another path) or post_logout_redirect_uri gets the error page, never a redirect; a wrong PKCE verifier and a reused code are invalid_grant and issue nothing', async () => {
    const authorize = (params: Record<string, string>) =>
      fetch(
        `${base}/oidc/auth?${new URLSearchParams({ response_type: 'code', scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', ...params })}`,
        {
          redirect: 'manual',
          headers: { accept: 'text/html' },
        },
      );
    for (const params of [
      { client_id: 'web-loopback', redirect_uri: `${loopbacks[1]!.origin}/cb` },
      { client_id: 'cli-app', redirect_uri: `${loopbacks[0]!.origin}/other` },
      { client_id: 'cli-app', redirect_uri: 'http://localhost.evil.test/cb' },
    ]) {
      const answer = await authorize(params);
      expect(answer.status).toBe(400);
      expect(answer.headers.get('location')).toBeNull();
      expect(await answer.text()).toContain('redirect_uri');
    }
    const logout = await fetch(
      `${base}/oidc/session/end?${new URLSearchParams({ client_id: 'cli-app', post_logout_redirect_uri: 'http://127.0.0.1/elsewhere' })}`,
      { redirect: 'manual', headers: { accept: 'text/html' } },
    );
    expect(logout.status).toBe(400);
    expect(logout.headers.get('location')).toBeNull();

    // A code with the wrong verifier: refused, nothing issued.
    const context = await browser.newContext();
    const page = await context.newPage();
    const request = await authorizationRequest(native, { redirect_uri: `${loopbacks[0]!.origin}/cb`, scope: 'openid api' });
    await page.goto(request.url.href);
    await signInAtProvider(page, outbox, 'alice@acme.test', 'code');
    const callback = await loopbacks[0]!.callbackFor(request.checks.expectedState);
    await expect(
      oidc.authorizationCodeGrant(native, callback, { ...request.checks, pkceCodeVerifier: oidc.randomPKCECodeVerifier() }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
    // ... a replay of a code: the first exchange's refresh token is revoked with the grant.
    const second = await authorizationRequest(native, { redirect_uri: `${loopbacks[0]!.origin}/cb`, scope: 'openid api' });
    await page.goto(second.url.href);
    const secondCallback = await loopbacks[0]!.callbackFor(second.checks.expectedState);
    const tokens = await oidc.authorizationCodeGrant(native, secondCallback.clone(), second.checks);
    await expect(oidc.authorizationCodeGrant(native, secondCallback, second.checks)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.refreshTokenGrant(native, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await context.close();
  });
});
