import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, signInAtProvider } from './support/chromium.js';
import type { outboxOf } from './support/outbox.js';
import {
  authorizationRequest,
  cspViolations,
  discover,
  type RelyingPartyServer,
  registeredAt,
  startProviderFor,
  startRelyingParty,
} from './support/relying-party.js';
import { postGraphQL, type TestService } from './support/service.js';

const VIEWER = '{ viewer { subject scope } }';
const GRAPHQL_RESPONSE = {};

describe('the API describes itself as an OAuth protected resource (RFC 9728)', () => {
  let service: TestService;
  let base: string;
  let metadataUrl: string;

  beforeAll(async () => {
    ({ service, base } = await startProviderFor([]));
    metadataUrl = `${base}/.well-known/oauth-protected-resource`;
  }, 60_000);
  afterAll(() => service?.stop());

  it('its metadata names PUBLIC_URL as the resource, the issuer as its authorization server, its scopes and the header as the one way to present a token', async () => {
    const response = await fetch(metadataUrl, { headers: { origin: 'https://elsewhere.example' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const metadata = await response.json();
    expect(metadata).toMatchObject({
      resource: base,
      authorization_servers: [service.config.tokens.issuer],
      bearer_methods_supported: ['header'],
    });
    expect(metadata.scopes_supported).toEqual(expect.arrayContaining(['api', 'documents:read', 'documents:write', 'sessions:manage']));
    expect(service.config.tokens.audience).toBe(base);
  });

  it('every 401 of /graphql and /api names the metadata in its challenge: no token, a refused token, a DPoP-scheme failure', async () => {
    const parameter = `resource_metadata="${metadataUrl}"`;
    const signedOut = await postGraphQL(`${base}/graphql`, { query: VIEWER }, { headers: GRAPHQL_RESPONSE });
    expect(signedOut.status).toBe(401);
    expect(signedOut.headers.get('www-authenticate')).toBe(`Bearer ${parameter}`);

    const refused = await postGraphQL(`${base}/graphql`, { query: VIEWER }, { token: 'not-a-token', headers: GRAPHQL_RESPONSE });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", ${parameter}`);

    const rest = await fetch(`${base}/api/documents`);
    expect(rest.status).toBe(401);
    expect(rest.headers.get('www-authenticate')).toBe(`Bearer ${parameter}`);
    const restRefused = await fetch(`${base}/api/documents`, { headers: { authorization: 'DPoP not-a-token' } });
    expect(restRefused.status).toBe(401);
    expect(restRefused.headers.get('www-authenticate')).toContain(parameter);

    // A missing scope's 403: its caller holds a token from the right server already; the metadata is not named.
    const scoped = await postGraphQL(
      `${base}/graphql`,
      { query: '{ documents { edges { cursor } } }' },
      {
        token: await service.token('user-1', { scope: ['account:read'] }),
      },
    );
    expect(scoped.status).toBe(403);
    expect(scoped.headers.get('www-authenticate')).not.toContain('resource_metadata');
  });

  it('tokens stay audience-bound: one for the old default audience is accepted until it expires, one for another resource is refused', async () => {
    const legacy = await service.token('user-1', { audience: 'urn:latchkey:api' });
    const accepted = await postGraphQL(`${base}/graphql`, { query: VIEWER }, { token: legacy });
    expect(accepted.json.data.viewer.subject).toBe('user-1');

    const elsewhere = await service.token('user-1', { audience: 'https://other-api.example' });
    const refused = await postGraphQL(`${base}/graphql`, { query: VIEWER }, { token: elsewhere, headers: GRAPHQL_RESPONSE });
    expect(refused.status).toBe(401);
    const restRefused = await fetch(`${base}/api/documents`, { headers: { authorization: `Bearer ${elsewhere}` } });
    expect(restRefused.status).toBe(401);
  });
});

describe.runIf(hasChromium)('a generic OAuth client finds its way from /graphql to a token (oauth4webapi, openid-client, Chromium)', () => {
  let service: TestService;
  let base: string;
  let browser: Browser;
  let app: RelyingPartyServer;
  let outbox: ReturnType<typeof outboxOf>;

  beforeAll(async () => {
    app = await startRelyingParty();
    ({ service, base, outbox } = await startProviderFor([
      registeredAt(app, { client_id: 'generic-app', token_endpoint_auth_method: 'none' }),
    ]));
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await app?.close();
  });

  it('the 401 names the metadata, the metadata names the authorization server, and a token asked for the resource is accepted', async () => {
    // 1. The API refuses, and says where its metadata is.
    const refused = await postGraphQL(`${base}/graphql`, { query: VIEWER }, { headers: GRAPHQL_RESPONSE });
    const challenge = refused.headers.get('www-authenticate')!;
    const metadataAddress = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
    expect(metadataAddress).toBe(`${base}/.well-known/oauth-protected-resource`);

    // 2. Resource discovery, checked as RFC 9728 §3.3 says (the resource must be the one asked about).
    const resource = new URL(base);
    const discovered = await oauth.processResourceDiscoveryResponse(
      resource,
      await oauth.resourceDiscoveryRequest(resource, { [oauth.allowInsecureRequests]: true }),
    );
    const issuer = discovered.authorization_servers![0]!;

    // 3. The authorization server's own discovery, then code + PKCE with RFC 8707's `resource`.
    const client = await discover(issuer, 'generic-app');
    const request = await authorizationRequest(client, {
      redirect_uri: `${app.origin}/cb`,
      scope: 'openid account:read',
      resource: discovered.resource,
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations = cspViolations(page);
    await page.goto(request.url.href);
    await page.waitForURL(/\/interaction\//);
    await signInAtProvider(page, outbox, 'alice@acme.test', 'code');
    const callback = await Promise.race([app.callbackFor(request.checks.expectedState), violations.first]);
    const tokens = await oidc.authorizationCodeGrant(client, callback, request.checks, { resource: discovered.resource });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: base, client_id: 'generic-app' });

    // 4. The API accepts it.
    const answer = await postGraphQL(`${base}/graphql`, { query: '{ me { email } }' }, { token: tokens.access_token });
    expect(answer.json.data).toEqual({ me: { email: 'alice@acme.test' } });
    expect(violations.list).toEqual([]);
    await context.close();
  });
});
