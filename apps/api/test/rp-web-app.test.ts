import { decodeJwt, exportJWK, generateKeyPair } from 'jose';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, type SignInBy, signInAtProvider } from './support/chromium.js';
import { COST_REPORTED } from './support/cost.js';
import type { outboxOf } from './support/outbox.js';
import {
  authorizationRequest,
  cspViolations,
  discover,
  type PendingAuthorization,
  type RelyingPartyServer,
  registeredAt,
  startProviderFor,
  startRelyingParty,
} from './support/relying-party.js';
import { postGraphQL, type TestService } from './support/service.js';

const SECRET = 'web-app-secret-that-is-long-enough-0123456789';
const SERVICE_SECRET = 'reports-service-secret-long-enough-0123456789';

describe.runIf(hasChromium)('a web application on another origin signs in, calls the API and signs out (openid-client, Chromium)', () => {
  let service: TestService;
  let base: string;
  let browser: Browser;
  let app: RelyingPartyServer;
  let outbox: ReturnType<typeof outboxOf>;
  let webApp: oidc.Configuration;
  let signingApp: oidc.Configuration;
  let reportsService: oidc.Configuration;
  let publicApp: oidc.Configuration;

  beforeAll(async () => {
    app = await startRelyingParty();
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const registered = (client: Record<string, unknown>) => registeredAt(app, client);
    const clients = [
      registered({
        client_id: 'web-app',
        client_secret: SECRET,
        token_endpoint_auth_method: 'client_secret_basic',
        backchannel_logout_uri: `${app.origin}/backchannel`,
        backchannel_logout_session_required: true,
      }),
      registered({
        client_id: 'signing-app',
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [{ ...(await exportJWK(publicKey)), alg: 'ES256', use: 'sig' }] },
        require_pushed_authorization_requests: true,
      }),
      registered({ client_id: 'public-app', token_endpoint_auth_method: 'none' }),
      // A back-end that checks API tokens: no redirect, no grant, it only introspects.
      {
        client_id: 'reports-service',
        client_secret: SERVICE_SECRET,
        token_endpoint_auth_method: 'client_secret_basic',
        redirect_uris: [],
        grant_types: [],
        response_types: [],
        resource_server: true,
      },
    ];
    ({ service, base, outbox } = await startProviderFor(clients));
    webApp = await discover(base, 'web-app', oidc.ClientSecretBasic(SECRET));
    signingApp = await discover(base, 'signing-app', oidc.PrivateKeyJwt(privateKey));
    reportsService = await discover(base, 'reports-service', oidc.ClientSecretBasic(SERVICE_SECRET));
    publicApp = await discover(base, 'public-app');
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await app?.close();
  });

  /** A new browser (no cookies) on the application's page, which sends it to the provider with `request`. */
  async function signIn(request: PendingAuthorization, by: SignInBy, email = 'alice@acme.test') {
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations = cspViolations(page);
    await page.goto(request.url.href);
    await page.waitForURL(/\/interaction\//);
    await signInAtProvider(page, outbox, email, by);
    const callback = await Promise.race([app.callbackFor(request.checks.expectedState), violations.first]);
    await page.waitForURL(`${app.origin}/cb**`);
    expect(violations.list).toEqual([]);
    return { context, page, callback, violations };
  }

  const graphqlAs = (accessToken: string, query = '{ me { email } viewer { amr } }') =>
    postGraphQL(`${base}/graphql`, { query }, { token: accessToken });

  async function signOut(context: BrowserContext, idToken: string) {
    const page = await context.newPage();
    const violations = cspViolations(page);
    const state = oidc.randomState();
    await page.goto(
      oidc.buildEndSessionUrl(webApp, { id_token_hint: idToken, post_logout_redirect_uri: `${app.origin}/signed-out`, state }).href,
    );
    await page.getByRole('button', { name: 'Sign out' }).click();
    await Promise.race([page.waitForURL(`${app.origin}/signed-out?state=${state}`), violations.first]);
    expect(violations.list).toEqual([]);
  }

  it('by the typed code (client_secret_basic): code + PKCE, an ID token with amr/acr/auth_time, the API with its token, userinfo, refresh rotation whose replay revokes the grant', async () => {
    const request = await authorizationRequest(webApp, {
      redirect_uri: `${app.origin}/cb`,
      scope: 'openid email profile offline_access api',
    });
    const { context, callback } = await signIn(request, 'code');
    const tokens = await oidc.authorizationCodeGrant(webApp, callback, request.checks);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope?.split(' ').sort()).toEqual(['api', 'email', 'openid', 'profile']);
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ email: 'alice@acme.test', amr: ['otp'], acr: 'urn:latchkey:acr:1fa' });
    expect(typeof claims.auth_time).toBe('number');
    const access = decodeJwt(tokens.access_token);
    expect(access).toMatchObject({ client_id: 'web-app', sub: claims.sub, amr: ['otp'], scope: 'openid email profile api' });

    expect((await graphqlAs(tokens.access_token)).json).toEqual({
      data: { me: { email: 'alice@acme.test' }, viewer: { amr: ['otp'] } },
      extensions: COST_REPORTED,
    });
    expect(await oidc.fetchUserInfo(webApp, tokens.access_token, claims.sub)).toEqual({
      sub: claims.sub,
      email: 'alice@acme.test',
      email_verified: true,
      name: expect.any(String),
    });

    // Refresh tokens rotate; the first one, replayed, is refused and takes the whole grant with it.
    const refreshed = await oidc.refreshTokenGrant(webApp, tokens.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await graphqlAs(refreshed.access_token)).json.data.me.email).toBe('alice@acme.test');
    await expect(oidc.refreshTokenGrant(webApp, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.refreshTokenGrant(webApp, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await context.close();
  });

  it('signs out through RP-initiated logout back to its post_logout_redirect_uri: the session is listed as ended (API 401, introspection inactive), the back-channel logout arrives, an offline_access grant of another client survives', async () => {
    const request = await authorizationRequest(webApp, { redirect_uri: `${app.origin}/cb`, scope: 'openid api' });
    const { context, page, callback } = await signIn(request, 'code');
    const tokens = await oidc.authorizationCodeGrant(webApp, callback, request.checks);
    const sid = decodeJwt(tokens.access_token)['sid'];
    expect(typeof sid).toBe('string');
    // A second application in the same browser signs in silently (the provider session) and asks for offline access.
    // (OpenID Connect grants offline_access only with prompt=consent: implicit for a first-party client.)
    const offline = await authorizationRequest(publicApp, {
      redirect_uri: `${app.origin}/cb`,
      scope: 'openid offline_access api',
      prompt: 'consent',
    });
    await page.goto(offline.url.href);
    const offlineTokens = await oidc.authorizationCodeGrant(publicApp, await app.callbackFor(offline.checks.expectedState), offline.checks);
    expect(decodeJwt(offlineTokens.access_token)['sid']).toBe(sid);
    expect(await oidc.tokenIntrospection(reportsService, tokens.access_token)).toMatchObject({ active: true, sid });

    await signOut(context, tokens.id_token!);

    // The session is over on every path that reads it: the API, introspection, the web app's refresh token.
    const refused = await graphqlAs(tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.json.errors[0].extensions).toEqual({ code: 'UNAUTHENTICATED' });
    expect(await oidc.tokenIntrospection(reportsService, tokens.access_token)).toEqual({ active: false });
    expect((await graphqlAs(offlineTokens.access_token)).status).toBe(401);
    await expect(oidc.refreshTokenGrant(webApp, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // The web app was told over the back channel, with the sid of its ID token.
    await expect.poll(() => app.logoutTokens.length).toBe(1);
    const logout = decodeJwt(app.logoutTokens[0]!);
    expect(logout).toMatchObject({ aud: 'web-app', sub: tokens.claims()!.sub, sid: tokens.claims()!['sid'] });
    // Offline access outlives the sign-out (OpenID Connect 11): what it refreshes into belongs to no session.
    const stillOffline = await oidc.refreshTokenGrant(publicApp, offlineTokens.refresh_token!);
    expect(decodeJwt(stillOffline.access_token)['sid']).toBeUndefined();
    expect((await graphqlAs(stillOffline.access_token)).json.data.me.email).toBe('alice@acme.test');
    await context.close();
  });

  it('by the e-mailed link, with PAR required (private_key_jwt), form_post and DPoP through openid-client: bound tokens work at the API and userinfo with proofs only', async () => {
    // The client requires pushed requests: a plain one is refused back at its redirect URI.
    const plain = await authorizationRequest(signingApp, { redirect_uri: `${app.origin}/cb` });
    const refusedPage = await (await browser.newContext()).newPage();
    await refusedPage.goto(plain.url.href);
    expect(new URL((await app.callbackFor(plain.checks.expectedState)).url).searchParams.get('error')).toBe('invalid_request');

    const dpop = oidc.getDPoPHandle(signingApp, await oidc.randomDPoPKeyPair('ES256'));
    const request = await authorizationRequest(
      signingApp,
      { redirect_uri: `${app.origin}/cb`, response_mode: 'form_post' },
      { par: true, dpop },
    );
    expect(request.url.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    const { context, callback } = await signIn(request, 'link');
    expect(callback.method).toBe('POST');
    const tokens = await oidc.authorizationCodeGrant(signingApp, callback, request.checks, undefined, { DPoP: dpop });
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token)['cnf']).toEqual({ jkt: expect.any(String) });

    const answer = await oidc.fetchProtectedResource(
      signingApp,
      tokens.access_token,
      new URL(`${base}/graphql`),
      'POST',
      JSON.stringify({ query: '{ me { email } }' }),
      new Headers({ 'content-type': 'application/json', accept: 'application/graphql-response+json' }),
      { DPoP: dpop },
    );
    expect(await answer.json()).toEqual({ data: { me: { email: 'alice@acme.test' } }, extensions: COST_REPORTED });
    const sub = tokens.claims()!.sub;
    expect(await oidc.fetchUserInfo(signingApp, tokens.access_token, sub, { DPoP: dpop })).toMatchObject({ sub, email: 'alice@acme.test' });
    // The same token without its proof is refused everywhere.
    await expect(oidc.fetchUserInfo(signingApp, tokens.access_token, sub)).rejects.toMatchObject({ status: 401 });
    expect((await graphqlAs(tokens.access_token)).status).toBe(401);
    await context.close();
  });

  it('a back-end introspects (RFC 7662): a resource server any API token, a client its own only, a public client none; a refresh token until revoked; an ended session or an expired token is inactive; bad client credentials are 401 invalid_client', async () => {
    const request = await authorizationRequest(webApp, { redirect_uri: `${app.origin}/cb` });
    const { context, callback } = await signIn(request, 'code');
    const tokens = await oidc.authorizationCodeGrant(webApp, callback, request.checks);
    const access = decodeJwt(tokens.access_token);
    const active = await oidc.tokenIntrospection(reportsService, tokens.access_token);
    expect(active).toMatchObject({
      active: true,
      sub: access.sub,
      client_id: 'web-app',
      scope: 'openid email profile api',
      exp: access.exp,
      sid: access['sid'],
      token_type: 'Bearer',
    });
    expect(await oidc.tokenIntrospection(webApp, tokens.access_token)).toMatchObject({ active: true, client_id: 'web-app' });
    // Tokens issued to another client are not this client's business; a public client may introspect nothing.
    expect(await oidc.tokenIntrospection(signingApp, tokens.access_token)).toEqual({ active: false });
    expect(await oidc.tokenIntrospection(publicApp, tokens.access_token)).toEqual({ active: false });
    const impostor = await discover(base, 'reports-service', oidc.ClientSecretBasic('not-the-secret-of-reports-service-0123456789'));
    await expect(oidc.tokenIntrospection(impostor, tokens.access_token)).rejects.toMatchObject({
      status: 401,
      cause: [{ parameters: { error: 'invalid_client' } }],
    });
    expect(await oidc.tokenIntrospection(reportsService, 'not-a-token')).toEqual({ active: false });
    const expired = await service.token(String(access.sub), { now: Date.now() - 3_600_000 });
    expect(await oidc.tokenIntrospection(reportsService, expired)).toEqual({ active: false });

    // A refresh token introspects through the provider: its own client only, active until revoked.
    expect(await oidc.tokenIntrospection(webApp, tokens.refresh_token!)).toMatchObject({ active: true, client_id: 'web-app' });
    expect(await oidc.tokenIntrospection(reportsService, tokens.refresh_token!)).toEqual({ active: false });
    await oidc.tokenRevocation(webApp, tokens.refresh_token!);
    expect(await oidc.tokenIntrospection(webApp, tokens.refresh_token!)).toEqual({ active: false });

    // Ending the session (as the account page or GraphQL's endSession do) makes its access tokens inactive.
    const ended = await graphqlAs(tokens.access_token, `mutation { endSession(id: "${String(access['sid'])}") }`);
    expect(ended.json).toEqual({ data: { endSession: true }, extensions: COST_REPORTED });
    expect(await oidc.tokenIntrospection(reportsService, tokens.access_token)).toEqual({ active: false });
    await context.close();
  });
});
