import { onPostgres } from '@latchkey/db/testing';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { hasChromium, launchChromium, signInAtProvider } from './support/chromium.js';
import { auditRows, ofType } from './support/audit.js';
import { outboxOf } from './support/outbox.js';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';
import {
  authorizationRequest,
  cspViolations,
  discover,
  type PendingAuthorization,
  type RelyingPartyServer,
  startProviderFor,
  startRelyingParty,
} from './support/relying-party.js';
import { postGraphQL, type TestService } from './support/service.js';

// Third-party apps (docs/security.md, "Third-party apps and consent"): a web app on another origin (openid-client)
// that is not first-party gets the consent page, in Chromium with every header enforced; what was allowed is
// remembered per user and client, asked again only for what is new, and revoked from the Connected apps list.

const SECRET = 'photo-app-secret-that-is-long-enough-0123456789';
/** A logo on an https origin that answers nothing (the page may show it; the CSP names that origin only). */
const LOGO = 'https://127.0.0.1:9/photo-app.png';

/** The third-party app's registration: not `first_party`, with what the consent page shows of it. */
const photoApp = (app: RelyingPartyServer) => ({
  client_id: 'photo-app',
  client_secret: SECRET,
  token_endpoint_auth_method: 'client_secret_basic',
  redirect_uris: [`${app.origin}/cb`],
  client_name: 'Photo App',
  logo_uri: LOGO,
  client_uri: 'https://photo-app.example/',
  policy_uri: 'https://photo-app.example/privacy',
  tos_uri: 'https://photo-app.example/terms',
});

/** Another third-party app whose logo is on plain http: never shown (mixed content, a tracking pixel). */
const plainApp = (app: RelyingPartyServer) => ({
  client_id: 'plain-app',
  token_endpoint_auth_method: 'none',
  redirect_uris: [`${app.origin}/cb`],
  client_name: 'Plain App',
  logo_uri: 'http://127.0.0.1:9/plain-app.png',
});

const READ = '{ documents(first: 1) { edges { node { id } } } }';
const CREATE = 'mutation ($input: CreateDocumentInput!) { createDocument(input: $input) { document { id } } }';
const CONNECTED = '{ viewer { connectedApps { clientId name scopes grantedAt lastUsedAt } } }';

/** The scopes the consent page lists (each item names its scope). */
const listedScopes = (page: Page) =>
  page.locator('#scopes li').evaluateAll((items) => items.map((item) => item.getAttribute('data-scope')));

/** Brings `page` to the app's authorization request and waits for the consent page, signing in first when asked. */
async function toConsent(
  page: Page,
  request: PendingAuthorization,
  outbox: ReturnType<typeof outboxOf>,
  signIn: boolean,
  name = 'Photo App',
) {
  await page.goto(request.url.href);
  if (signIn) {
    await page.waitForURL(/\/interaction\//);
    await signInAtProvider(page, outbox, 'alice@acme.test', 'code');
  }
  await page.getByRole('heading', { name: `Allow ${name}?` }).waitFor();
}

describe.runIf(hasChromium)('a third-party web app on another origin asks for consent (openid-client, Chromium)', () => {
  let service: TestService;
  let base: string;
  let browser: Browser;
  let app: RelyingPartyServer;
  let outbox: ReturnType<typeof outboxOf>;
  let photo: oidc.Configuration;
  /** the browser that allowed the app first (its provider session stays signed in) */
  let allowed: { context: BrowserContext; page: Page };
  let first: { accessToken: string; refreshToken: string; sub: string };

  beforeAll(async () => {
    app = await startRelyingParty();
    ({ service, base, outbox } = await startProviderFor([photoApp(app), plainApp(app)]));
    photo = await discover(base, 'photo-app', oidc.ClientSecretBasic(SECRET));
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await app?.close();
  });

  const graphqlAs = (token: string, query: string, variables?: Record<string, unknown>) =>
    postGraphQL(`${base}/graphql`, { query, variables }, { token });

  it('allowed with documents:read: the page says who asks, what each scope allows and for which account, under a CSP that admits the https logo only; the token reads and cannot write', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations = cspViolations(page);
    // OpenID Connect grants offline_access only with prompt=consent.
    const request = await authorizationRequest(photo, {
      redirect_uri: `${app.origin}/cb`,
      scope: 'openid email offline_access documents:read',
      prompt: 'consent',
    });
    await toConsent(page, request, outbox, true);

    expect(await page.locator('#account-email').textContent()).toBe('alice@acme.test');
    expect(await page.locator('#app-name').textContent()).toBe('Photo App');
    expect((await listedScopes(page)).sort()).toEqual(['documents:read', 'email', 'offline_access', 'openid']);
    await expect(page.locator('#scopes li[data-scope="documents:read"]').textContent()).resolves.toBe(
      'Read the documents you can see, with their authors and organizations.',
    );
    expect(await page.locator('img').getAttribute('src')).toBe(LOGO);
    const again = await context.request.get(page.url());
    const csp = again.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`form-action 'self' ${app.origin}`);
    expect(csp).toMatch(/; img-src https:\/\/127\.0\.0\.1:9$/);

    await page.getByRole('button', { name: 'Allow' }).click();
    const callback = await Promise.race([app.callbackFor(request.checks.expectedState), violations.first]);
    await page.waitForURL(`${app.origin}/cb**`);
    expect(violations.list).toEqual([]);
    const tokens = await oidc.authorizationCodeGrant(photo, callback, request.checks);
    // offline_access brought a refresh token; the access token carries the API's scopes and the claims' ones.
    expect(tokens.scope?.split(' ').sort()).toEqual(['documents:read', 'email', 'openid']);
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const access = decodeJwt(tokens.access_token);
    expect(access).toMatchObject({ client_id: 'photo-app', scope: 'openid email documents:read' });

    const read = await graphqlAs(tokens.access_token, READ);
    expect(read.status).toBe(200);
    expect(read.json.data.documents.edges.length).toBe(1);
    const write = await graphqlAs(tokens.access_token, CREATE, { input: { organization: 'acme', title: 'From the app' } });
    expect(write.status).toBe(403);
    expect(write.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(write.json.errors[0].extensions.code).toBe('FORBIDDEN');
    // Its own user's connected apps are not its business without account:read.
    const apps = await graphqlAs(tokens.access_token, CONNECTED);
    expect(apps.status).toBe(403);
    expect(apps.headers.get('www-authenticate')).toContain('scope="account:read"');

    allowed = { context, page };
    first = { accessToken: tokens.access_token, refreshToken: tokens.refresh_token!, sub: String(access.sub) };
  }, 60_000);

  it('a logo_uri on plain http is not shown, and the CSP admits no image origin', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const plain = await discover(base, 'plain-app');
    const request = await authorizationRequest(plain, { redirect_uri: `${app.origin}/cb`, scope: 'openid documents:read' });
    await toConsent(page, request, outbox, true, 'Plain App');
    expect(await page.locator('img').count()).toBe(0);
    const csp = (await context.request.get(page.url())).headers()['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('img-src');
    await context.close();
  }, 60_000);

  it('denied: the app gets access_denied, and nothing is connected', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const request = await authorizationRequest(photo, { redirect_uri: `${app.origin}/cb`, scope: 'openid documents:write' });
    // Another browser of the same person: the grant remembered holds documents:read, not documents:write.
    await toConsent(page, request, outbox, true);
    expect(await listedScopes(page)).toEqual(['documents:write']);
    await page.getByRole('button', { name: 'Deny' }).click();
    const callback = await app.callbackFor(request.checks.expectedState);
    await expect(oidc.authorizationCodeGrant(photo, callback, request.checks)).rejects.toMatchObject({ error: 'access_denied' });
    await context.close();
  }, 60_000);

  it('remembered per user and client: another sign-in asking for what was allowed gets no consent page; asking for a new scope prompts for that scope only', async () => {
    // A new browser (a new provider session): documents:read was allowed already.
    const context = await browser.newContext();
    const page = await context.newPage();
    const known = await authorizationRequest(photo, { redirect_uri: `${app.origin}/cb`, scope: 'openid documents:read' });
    await page.goto(known.url.href);
    await page.waitForURL(/\/interaction\//);
    await signInAtProvider(page, outbox, 'alice@acme.test', 'code');
    const straight = await app.callbackFor(known.checks.expectedState);
    expect((await oidc.authorizationCodeGrant(photo, straight, known.checks)).scope).toBe('openid documents:read');
    await context.close();

    // The first browser asks for documents:write too: only that one is asked.
    const { page: firstPage } = allowed;
    const more = await authorizationRequest(photo, { redirect_uri: `${app.origin}/cb`, scope: 'openid documents:read documents:write' });
    await toConsent(firstPage, more, outbox, false);
    expect(await listedScopes(firstPage)).toEqual(['documents:write']);
    await firstPage.getByRole('button', { name: 'Allow' }).click();
    const callback = await app.callbackFor(more.checks.expectedState);
    const tokens = await oidc.authorizationCodeGrant(photo, callback, more.checks);
    expect(tokens.scope?.split(' ').sort()).toEqual(['documents:read', 'documents:write', 'openid']);
  }, 90_000);

  it('the Connected apps list (GraphQL for a first-party token, and the account page); revoked there: the refresh fails and the access token is refused', async () => {
    const own = await service.token(first.sub);
    const listed = await graphqlAs(own, CONNECTED);
    expect(listed.json.data.viewer.connectedApps).toEqual([
      {
        clientId: 'photo-app',
        name: 'Photo App',
        scopes: expect.arrayContaining(['openid', 'email', 'offline_access', 'documents:read', 'documents:write']),
        grantedAt: expect.any(String),
        lastUsedAt: expect.any(String),
      },
    ]);
    expect((await graphqlAs(first.accessToken, READ)).status).toBe(200);

    const { page } = allowed;
    await page.goto(`${base}/account`);
    const item = page.locator('#connected-apps li[data-app="photo-app"]');
    await expect(item.locator('strong').first().textContent()).resolves.toBe('Photo App');
    await item.getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(`${base}/account?done=app-revoked`);
    await expect(page.locator('#connected-apps').textContent()).resolves.toContain('No app has access');

    await expect(oidc.refreshTokenGrant(photo, first.refreshToken)).rejects.toMatchObject({ error: 'invalid_grant' });
    // Refused here at once (the instance that revoked it); other instances from their next read (below).
    expect((await graphqlAs(first.accessToken, READ)).status).toBe(401);
    expect((await graphqlAs(own, CONNECTED)).json.data.viewer.connectedApps).toEqual([]);
    const unknown = await graphqlAs(own, 'mutation { revokeConnectedApp(clientId: "photo-app") }');
    expect(unknown.json.errors[0].extensions.code).toBe('NOT_FOUND');

    // Allowed again later: a new token works (only tokens issued before the revocation are refused). Tokens carry
    // their issue time in seconds, so those of the revocation's own second are refused too: the clock moves on first.
    const nextSecond = Math.ceil(Date.now() / 1000) * 1000;
    await expect.poll(() => Date.now() >= nextSecond, { interval: 20 }).toBe(true);
    const request = await authorizationRequest(photo, { redirect_uri: `${app.origin}/cb`, scope: 'openid documents:read' });
    await toConsent(page, request, outbox, false);
    expect(await listedScopes(page)).toEqual(['openid', 'documents:read']);
    await page.getByRole('button', { name: 'Allow' }).click();
    const tokens = await oidc.authorizationCodeGrant(photo, await app.callbackFor(request.checks.expectedState), request.checks);
    expect((await graphqlAs(tokens.access_token, READ)).status).toBe(200);

    // Revoked over GraphQL (account:manage): recorded like an ended session.
    const revoked = await graphqlAs(own, 'mutation { revokeConnectedApp(clientId: "photo-app") }');
    expect(revoked.json.data).toEqual({ revokeConnectedApp: true });
    expect((await graphqlAs(tokens.access_token, READ)).status).toBe(401);
    await allowed.context.close();

    // Audited like an ended session: who, whom, which app, why; and each consent with the scopes it left the app.
    const rows = await auditRows(service);
    expect(ofType(rows, 'app.revoked').map(({ actor, subject, details }) => ({ actor, subject, details }))).toEqual([
      { actor: first.sub, subject: first.sub, details: { clientId: 'photo-app', reason: 'revoked by its user on the account page' } },
      { actor: first.sub, subject: first.sub, details: { clientId: 'photo-app', reason: 'revoked by its user' } },
    ]);
    expect(ofType(rows, 'app.allowed').map((row) => row.details)).toContainEqual({
      clientId: 'photo-app',
      scope: 'openid email offline_access documents:read',
    });
  }, 90_000);

  it('bad input: an unknown scope, or `api` from a third-party app, is invalid_scope before any sign-in', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    for (const scope of ['openid documents:shred', 'openid api']) {
      const request = await authorizationRequest(photo, { redirect_uri: `${app.origin}/cb`, scope });
      await page.goto(request.url.href);
      const callback = await app.callbackFor(request.checks.expectedState);
      await expect(oidc.authorizationCodeGrant(photo, callback, request.checks)).rejects.toMatchObject({ error: 'invalid_scope' });
    }
    await context.close();
  }, 60_000);

  it('bad input: a consent form posted without its interaction, or from another origin, is refused', async () => {
    const post = (origin: string) =>
      fetch(`${base}/interaction/abcdefghij/consent`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: 'decision=allow',
      });
    expect((await post(base)).status).toBe(400);
    expect((await post(app.origin)).status).toBe(403);
  });
});

describe('start-up: a third-party app cannot be a resource server', () => {
  it('names the client', () => {
    const clients = [
      { client_id: 'partner-app', client_secret: SECRET, redirect_uris: ['https://partner.example/cb'], resource_server: true },
    ];
    expect(() => loadConfig({ env: { OIDC_CLIENTS: JSON.stringify(clients) } })).toThrow(
      /OIDC_CLIENTS\.0 \("partner-app"\): a third-party app \(no "first_party": true\) cannot be a resource_server/,
    );
  });
});

describe.runIf(hasChromium && onPostgres('the PostgreSQL-only tests'))('an app revoked on one instance, on a second instance', () => {
  let processes: ServiceProcesses;
  let app: RelyingPartyServer;
  let browser: Browser;

  beforeAll(async () => {
    app = await startRelyingParty();
    const clients = JSON.stringify([photoApp(app)]);
    processes = await startServiceProcesses(2, { OIDC_CLIENTS: clients }, { publicUrlOnFirst: true });
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await processes?.stop();
    await app?.close();
  });

  // The stated delay is the ended list's reading interval (a second; docs/security.md); the refusal on the second
  // instance is the event waited for, with a deadline far above any real latency, and its time is measured.
  it('refuses the app access token from its next read of the ended list', async () => {
    const [first, second] = [processes.publicUrl, processes.urls[1]!];
    const photo = await discover(first, 'photo-app', oidc.ClientSecretBasic(SECRET));
    const context = await browser.newContext();
    const page = await context.newPage();
    const request = await authorizationRequest(photo, {
      redirect_uri: `${app.origin}/cb`,
      scope: 'openid offline_access documents:read',
      prompt: 'consent',
    });
    await toConsent(page, request, outboxOf(processes.dataDir), true);
    await page.getByRole('button', { name: 'Allow' }).click();
    const tokens = await oidc.authorizationCodeGrant(photo, await app.callbackFor(request.checks.expectedState), request.checks);
    const readThere = async () => (await postGraphQL(`${second}/graphql`, { query: READ }, { token: tokens.access_token })).status;
    expect(await readThere()).toBe(200);

    await page.goto(`${first}/account`);
    await page.locator('#connected-apps li[data-app="photo-app"]').getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(`${first}/account?done=app-revoked`);
    const revokedAt = performance.now();
    await expect(oidc.refreshTokenGrant(photo, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect.poll(readThere, { timeout: 20_000, interval: 50 }).toBe(401);
    expect(performance.now() - revokedAt).toBeLessThan(5000);
    await context.close();
  }, 90_000);
});
