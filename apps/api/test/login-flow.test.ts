import { createHash, randomBytes } from 'node:crypto';
import { DPOP_ALGORITHMS, randomToken } from '@latchkey/auth';
import { oneTimeTokens, seedDemoData } from '@latchkey/db';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { COST_REPORTED } from './support/cost.js';
import { outboxOf } from './support/outbox.js';
import { postGraphQL, startLocalhostService, type TestService } from './support/service.js';

let service: TestService;
let base: string;

beforeAll(async () => {
  ({ service, base } = await startLocalhostService({ NODE_ENV: 'development' }));
  await seedDemoData(service.database);
});
afterAll(() => service?.stop());

const outbox = () => outboxOf(service.config.dataDir);
const outboxMessages = () => ({ length: outbox().count() });
const nextMessage = (after: number, to?: string) => outbox().next(after, to);

/** Starts an authorization-code + PKCE request of the demo client; returns the interaction path. */
async function authorize(browser: BrowserSession, scope = 'openid email profile api', extra: Record<string, string> = {}) {
  const verifier = randomToken();
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = randomBytes(8).toString('hex');
  const params = new URLSearchParams({
    client_id: 'latchkey-demo',
    response_type: 'code',
    redirect_uri: `${base}/callback`,
    scope,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    nonce: randomBytes(8).toString('hex'),
    ...extra,
  });
  const start = await browser.request(`/oidc/auth?${params}`);
  expect(start.status).toBe(303);
  expect(start.location).toMatch(/^\/interaction\/[A-Za-z0-9_-]+$/);
  return { interaction: start.location!, verifier, state };
}

describe('one-time-token login through the OpenID provider (spec One-time token login, Authentication 1)', () => {
  it('a magic link signs the browser in: code + PKCE, an ID token with amr otp, and an access token the API accepts', async () => {
    const browser = new BrowserSession(base);
    const { interaction, verifier, state } = await authorize(browser);
    const signIn = await browser.request(interaction);
    expect(signIn.status).toBe(200);
    expect(signIn.text).toContain('action="/ott/generate"');

    const before = outboxMessages().length;
    const generated = await browser.request('/ott/generate', { form: { username: 'alice@acme.test' } });
    expect(generated.status).toBe(303);
    expect(generated.location).toBe('/login/ott?sent=1');
    const message = await nextMessage(before, 'alice@acme.test');
    expect(message.to).toBe('alice@acme.test');
    const link = new URL(message.magicLink);
    expect(`${link.origin}${link.pathname}`).toBe(`${base}/login/ott`);
    const token = link.searchParams.get('token')!;
    // Stored only as a hash.
    const stored = await service.database.db.select().from(oneTimeTokens);
    expect(JSON.stringify(stored)).not.toContain(token);

    // The link's page never echoes the token; the browser puts it into the form.
    const landing = await browser.request(`/login/ott?token=${token}`);
    expect(landing.status).toBe(200);
    expect(landing.text).not.toContain(token);
    expect(landing.headers.get('referrer-policy')).toBe('no-referrer');

    const consumed = await browser.request('/login/ott', { form: { token } });
    expect(consumed.status).toBe(303);
    expect(consumed.location).toBe(interaction);
    const finished = await browser.request(interaction);
    expect(finished.status).toBe(303);
    const resumed = await browser.request(finished.location!);
    expect(resumed.status).toBe(303);
    const callback = new URL(resumed.location!);
    expect(`${callback.origin}${callback.pathname}`).toBe(`${base}/callback`);
    expect(callback.searchParams.get('state')).toBe(state);
    const code = callback.searchParams.get('code')!;

    const tokenResponse = await fetch(`${base}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: `${base}/callback`,
        client_id: 'latchkey-demo',
        code_verifier: verifier,
      }),
    });
    expect(tokenResponse.status).toBe(200);
    const tokens = (await tokenResponse.json()) as { access_token: string; id_token: string; token_type: string; expires_in: number };
    const idToken = decodeJwt(tokens.id_token);
    expect(idToken).toMatchObject({ iss: base, aud: 'latchkey-demo', amr: ['otp'], acr: 'urn:latchkey:acr:1fa', email: 'alice@acme.test' });
    expect(typeof idToken.auth_time).toBe('number');
    expect(decodeProtectedHeader(tokens.access_token).typ).toBe('at+jwt');
    const accessToken = decodeJwt(tokens.access_token);
    expect(accessToken).toMatchObject({
      iss: base,
      // The API's resource identifier (RFC 9728): PUBLIC_URL.
      aud: base,
      sub: idToken.sub,
      amr: ['otp'],
      acr: 'urn:latchkey:acr:1fa',
      // the scopes asked for: the API's, and the OpenID ones whose claims userinfo releases for this token
      scope: 'openid email profile api',
    });
    expect(accessToken.exp! - accessToken.iat!).toBe(600);

    const api = await postGraphQL(
      `${base}/graphql`,
      { query: '{ me { email } viewer { amr acr } documents(first: 5) { edges { node { title } } } }' },
      { token: tokens.access_token },
    );
    expect(api.status).toBe(200);
    expect(api.json.data.me.email).toBe('alice@acme.test');
    expect(api.json.data.viewer).toEqual({ amr: ['otp'], acr: 'urn:latchkey:acr:1fa' });
    expect(api.json.data.documents.edges.length).toBeGreaterThan(0);

    // Single use: the same token signs nobody in again.
    const again = await new BrowserSession(base).request('/login/ott', { form: { token } });
    expect(again.status).toBe(401);
  });

  it('the provider and the API publish one and the same key set', async () => {
    const discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery['issuer']).toBe(base);
    expect(discovery['jwks_uri']).toBe(`${base}/.well-known/jwks.json`);
    expect(discovery['code_challenge_methods_supported']).toEqual(['S256']);
  });

  it('discovery advertises only code + PKCE (RFC 9700) for redirects, and the authorization endpoint accepts nothing else', async () => {
    const discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery['response_types_supported']).toEqual(['code']);
    // ... and the device grant, for a client that registers it (RFC 8628).
    expect(discovery['grant_types_supported']).toEqual([
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
    ]);
    for (const responseType of ['id_token', 'code id_token', 'none']) {
      const start = await new BrowserSession(base).request(
        `/oidc/auth?${new URLSearchParams({
          client_id: 'latchkey-demo',
          response_type: responseType,
          redirect_uri: `${base}/callback`,
          scope: 'openid',
          code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
          code_challenge_method: 'S256',
          state: 'st',
          nonce: 'n',
        })}`,
      );
      expect(start.status).toBe(303);
      const refused = new URL(start.location!);
      expect(`${refused.origin}${refused.pathname}`).toBe(`${base}/callback`);
      expect(new URLSearchParams(refused.hash.slice(1) || refused.search).get('error')).toBe('unsupported_response_type');
    }
  });

  it('rule 3: the generate answer is identical whether or not the account exists, and never carries the token', async () => {
    const answer = async (username: string) => {
      const response = await new BrowserSession(base).request('/ott/generate', { form: { username } });
      // The short-code binding cookie is set for every address alike; only its random value differs.
      const headers = Object.fromEntries(
        [...response.headers]
          .filter(([name]) => !['date', 'x-request-id'].includes(name))
          .map(([name, value]) => [name, name === 'set-cookie' ? value.replace(/^lk_code=[A-Za-z0-9_-]{43};/, 'lk_code=*;') : value]),
      );
      expect(headers['set-cookie']).toMatch(/^lk_code=\*;/);
      return { status: response.status, headers, text: response.text, location: response.location };
    };
    expect(await answer('nobody@nowhere.test')).toEqual(await answer('bob@acme.test'));
    const json = await new BrowserSession(base).request('/ott/generate', { json: { username: 'nobody@nowhere.test' } });
    const jsonKnown = await new BrowserSession(base).request('/ott/generate', { json: { username: 'bob@acme.test' } });
    expect([json.status, json.text]).toEqual([jsonKnown.status, jsonKnown.text]);
    expect(json.status).toBe(202);
  });

  it('a link followed in another browser signs that browser in, never the sign-in pending in the first', async () => {
    const first = new BrowserSession(base);
    const { interaction } = await authorize(first);
    await first.request(interaction);
    const before = outboxMessages().length;
    await first.request('/ott/generate', { form: { username: 'alice@acme.test' } });
    const token = new URL((await nextMessage(before, 'alice@acme.test')).magicLink).searchParams.get('token')!;

    const second = new BrowserSession(base);
    const consumed = await second.request('/login/ott', { form: { token } });
    expect(consumed.status).toBe(303);
    // The second browser is signed in to the provider itself and sees its account page.
    expect(consumed.location).toBe('/account');
    const account = await second.request('/account');
    expect(account.status).toBe(200);
    expect(account.text).toContain('Signed in as <strong>alice@acme.test</strong> with a sign-in link or code by e-mail');
    // The first browser's sign-in is still waiting for a login.
    const pending = await first.request(interaction);
    expect(pending.status).toBe(200);
    expect(pending.text).toContain('action="/ott/generate"');
  });
});

describe('the demo client (a public OpenID client at /)', () => {
  it('serves its page at / and /callback without sign-in, with a strict CSP and its module script from /demo.js, which loads the typed client from /client/', async () => {
    for (const path of ['/', '/callback?code=x&state=y']) {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
      const html = await response.text();
      expect(html).toContain('"clientId":"latchkey-demo"');
      expect(html).toContain(`"redirectUri":"${base}/callback"`);
      expect(html).toContain('<script type="module" src="/demo.js"></script>');
      expect(html).toContain('"persisted":"apq"');
    }
    const script = await fetch(`${base}/demo.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const source = await script.text();
    expect(source).toContain("code_challenge_method: 'S256'");
    expect(source).toContain("from '/client/index.js'");
    const client = await fetch(`${base}/client/index.js`);
    expect(client.status).toBe(200);
    expect(client.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await client.text()).toContain('createClient');
    expect((await fetch(`${base}/client/nope.js`)).status).toBe(404);
    expect((await fetch(`${base}/client/index.d.ts`)).status).toBe(404);
  });
});

describe('a sign-in in progress cannot be forged from other tokens', () => {
  it('the sign-in cookie is no magic link, and a magic link put into the sign-in cookie signs nobody in', async () => {
    const browser = new BrowserSession(base);
    const { interaction } = await authorize(browser);
    await browser.request(interaction);
    const before = outboxMessages().length;
    await browser.request('/ott/generate', { form: { username: 'alice@acme.test' } });
    const token = new URL((await nextMessage(before, 'alice@acme.test')).magicLink).searchParams.get('token')!;
    await browser.request('/login/ott', { form: { token } });
    const continuation = browser.cookies.get('lk_signin')!;
    expect(continuation).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await new BrowserSession(base).request('/login/ott', { form: { token: continuation } })).status).toBe(401);

    // A fresh magic-link token smuggled into the cookie of another pending sign-in does not complete it.
    const other = new BrowserSession(base);
    const pending = await authorize(other);
    await other.request(pending.interaction);
    const count = outboxMessages().length;
    await other.request('/ott/generate', { form: { username: 'bob@acme.test' } });
    const link = new URL((await nextMessage(count, 'bob@acme.test')).magicLink).searchParams.get('token')!;
    other.cookies.set('lk_signin', link);
    const page = await other.request(pending.interaction);
    expect(page.status).toBe(200);
    expect(page.text).toContain('action="/ott/generate"');
  });
});

describe('refresh tokens (offline_access) rotate on every use', () => {
  const GRANTED_FOR = [
    ['the API by default', {}],
    ['the former audience urn:latchkey:api (an older version named the API so)', { resource: 'urn:latchkey:api' }],
  ] as const;
  it.each(GRANTED_FOR)('a refresh token for %s rotates once, the old one then refused', async (_, resource) => {
    const browser = new BrowserSession(base);
    const { interaction, verifier } = await authorize(browser, 'openid email offline_access api', resource);
    await browser.request(interaction);
    const before = outboxMessages().length;
    await browser.request('/ott/generate', { form: { username: 'carol@globex.test' } });
    const token = new URL((await nextMessage(before, 'carol@globex.test')).magicLink).searchParams.get('token')!;
    await browser.request('/login/ott', { form: { token } });
    const resumed = await browser.request((await browser.request(interaction)).location!);
    const code = new URL(resumed.location!).searchParams.get('code')!;
    const exchange = (body: Record<string, string>) =>
      fetch(`${base}/oidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: 'latchkey-demo', ...body }),
      });
    const first = (await (
      await exchange({ grant_type: 'authorization_code', code, redirect_uri: `${base}/callback`, code_verifier: verifier })
    ).json()) as { refresh_token: string; access_token: string };
    expect(first.refresh_token).toEqual(expect.any(String));
    const rotated = await exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(rotated.status).toBe(200);
    const second = (await rotated.json()) as { refresh_token: string; access_token: string };
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(decodeJwt(second.access_token)).toMatchObject({ aud: base, amr: ['otp'] });
    const api = await postGraphQL(`${base}/graphql`, { query: '{ me { email } }' }, { token: second.access_token });
    expect(api.json).toEqual({ data: { me: { email: 'carol@globex.test' } }, extensions: COST_REPORTED });
    // The used refresh token is spent (reuse is refused).
    expect((await exchange({ grant_type: 'refresh_token', refresh_token: first.refresh_token })).status).toBe(400);
  });
});

describe('DPoP now that the API checks proof of possession', () => {
  it('discovery advertises the DPoP algorithms the API accepts, and a token request with a DPoP proof gets a DPoP token bound to its key', async () => {
    const discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery['dpop_signing_alg_values_supported']).toEqual([...DPOP_ALGORITHMS]);

    const browser = new BrowserSession(base);
    const { interaction, verifier } = await authorize(browser);
    await browser.request(interaction);
    const before = outboxMessages().length;
    await browser.request('/ott/generate', { form: { username: 'bob@acme.test' } });
    await browser.request('/login/ott', {
      form: { token: new URL((await nextMessage(before, 'bob@acme.test')).magicLink).searchParams.get('token')! },
    });
    const resumed = await browser.request((await browser.request(interaction)).location!);
    const code = new URL(resumed.location!).searchParams.get('code')!;

    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const proof = await new SignJWT({ htm: 'POST', htu: `${base}/oidc/token`, jti: randomBytes(16).toString('hex') })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(publicKey) })
      .setIssuedAt()
      .sign(privateKey);
    const response = await fetch(`${base}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: `${base}/callback`,
        client_id: 'latchkey-demo',
        code_verifier: verifier,
      }),
    });
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as { token_type: string; access_token: string };
    expect(tokens.token_type).toBe('DPoP');
    expect(decodeJwt(tokens.access_token)['cnf']).toEqual({ jkt: await calculateJwkThumbprint(await exportJWK(publicKey)) });
    // Bound: as a bearer token it is refused (the API wants its proof; test/dpop.test.ts proves the rest).
    const asBearer = await postGraphQL(`${base}/graphql`, { query: '{ me { email } }' }, { token: tokens.access_token });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);
  });
});

// Last: wrong tokens slow down and then lock out this test's source address (127.0.0.1).
describe('login endpoints under bad input', () => {
  it('cross-site posts and bad input are refused with a 4xx, never a 5xx', async () => {
    const browser = new BrowserSession(base);
    expect(
      (await browser.request('/ott/generate', { form: { username: 'alice@acme.test' }, headers: { origin: 'https://evil.example' } }))
        .status,
    ).toBe(403);
    // A page under no-referrer posts with Origin: null; Fetch Metadata then tells same-site from cross-site.
    expect(
      (
        await browser.request('/ott/generate', {
          form: { username: 'alice@acme.test' },
          headers: { origin: 'null', 'sec-fetch-site': 'cross-site' },
        })
      ).status,
    ).toBe(403);
    expect((await browser.request('/ott/generate', { form: { username: 'alice@acme.test' }, headers: { origin: 'null' } })).status).toBe(
      403,
    );
    expect(
      (
        await browser.request('/ott/generate', {
          form: { username: 'alice@acme.test' },
          headers: { origin: 'null', 'sec-fetch-site': 'same-origin' },
        })
      ).status,
    ).toBe(303);
    expect((await browser.request('/ott/generate', { form: {} })).status).toBe(400);
    expect((await browser.request('/ott/generate', { form: { username: 'not an address' } })).status).toBe(400);
    expect((await browser.request('/ott/generate', { json: { username: 42 } })).status).toBe(400);
    expect((await browser.request('/ott/generate', { json: [1, 2] })).status).toBe(400);
    const garbage = await fetch(`${base}/ott/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    expect(garbage.status).toBe(400);
    const wrongType = await fetch(`${base}/ott/generate`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'username=a@b.c',
    });
    expect(wrongType.status).toBe(415);
    const huge = await fetch(`${base}/ott/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'a'.repeat(10_000) }),
    });
    expect(huge.status).toBe(413);
    // Refused as invalid, or already slowed down by earlier wrong tokens from this address.
    expect([401, 429]).toContain((await browser.request('/login/ott', { form: { token: 'x' } })).status);
    // Neither a token nor a code: malformed, refused before any lookup.
    expect((await browser.request('/login/ott', { form: {} })).status).toBe(400);
    expect((await browser.request('/ott/generate')).status).toBe(405);
    expect((await browser.request('/interaction/unknown-interaction-id')).status).toBe(400);
    // A NUL character in an authorization parameter is the client's mistake: 400 invalid_request, not a 500.
    const nul = await new BrowserSession(base).request(
      `/oidc/auth?client_id=latchkey-demo&response_type=code&redirect_uri=${encodeURIComponent(`${base}/callback`)}&scope=openid&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256&state=a%00b`,
    );
    expect(nul.status).toBe(400);
    expect(nul.text).toContain('invalid_request');
  });
});
