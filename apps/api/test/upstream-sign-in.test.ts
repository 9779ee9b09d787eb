import type { UpstreamProvider } from '@latchkey/auth/testing';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import type { Demo } from './support/demo.js';
import { demoAuthorization } from './support/oidc.js';
import { proveLink } from './support/link-sign-in.js';
import { policyFile } from './support/policy-file.js';
import type { TestService } from './support/service.js';
import { startPair, type Pair } from './support/upstream-pair.js';

// Sign-in through an upstream OpenID provider (AUTHORIZATION_CODE, linked by issuer + subject), and linking
// from the account page. The service and its upstream provider: support/upstream-pair.ts.

describe('sign-in through an upstream OpenID provider (AUTHORIZATION_CODE, linked by issuer + subject)', () => {
  let pair: Pair;
  let service: TestService;
  let base: string;
  let upstream: UpstreamProvider;
  let demo: Demo;

  beforeAll(async () => {
    // root needs both an e-mailed link and the upstream sign-in: the factor page offers the second.
    const AUTH_POLICY_FILE = policyFile({
      rules: [
        {
          name: 'sso-for-root',
          appliesTo: { users: ['root@latchkey.test'] },
          anyOf: [[{ factor: 'OTT' }, { factor: 'AUTHORIZATION_CODE' }]],
        },
      ],
    });
    pair = await startPair({ AUTH_POLICY_FILE });
    ({ service, base, upstream, demo } = pair);
  });
  afterAll(() => pair?.stop());

  const stored = () => pair.stored();
  const _startUpstream = (browser: BrowserSession) => pair.startUpstream(browser);
  const signInUpstream = (browser: BrowserSession, sub: string) => pair.signInUpstream(browser, sub);

  async function signedInByEmail(email: string): Promise<BrowserSession> {
    const browser = new BrowserSession(base);
    expect((await proveLink(browser, service.config.dataDir, email)).location).toBe('/account');
    return browser;
  }

  it('the sign-in page offers the upstream provider by name; the redirect carries state, nonce and PKCE, sealed in a cookie', async () => {
    const browser = new BrowserSession(base);
    const signIn = await browser.request('/login');
    expect(signIn.text).toContain('<a id="upstream" href="/login/upstream">Sign in with Acme SSO</a>');
    const start = await browser.request('/login/upstream');
    expect(start.status).toBe(303);
    const url = new URL(start.location!);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: upstream.clientId,
      response_type: 'code',
      scope: 'openid email',
      redirect_uri: `${base}/login/upstream/callback`,
      code_challenge_method: 'S256',
    });
    for (const param of ['state', 'nonce', 'code_challenge']) expect(url.searchParams.get(param)).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const cookie = start.headers.getSetCookie().find((line) => line.startsWith('lk_upstream='))!;
    expect(cookie).toMatch(/; Path=\/login\/upstream; HttpOnly; SameSite=Lax/);
    expect(cookie).toMatch(/Max-Age=600/);
    // The cookie is sealed: none of the request's values can be read from it.
    const sealed = browser.cookies.get('lk_upstream')!;
    for (const param of ['state', 'nonce'])
      expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain(url.searchParams.get(param));
    // Only GET starts it.
    expect((await browser.request('/login/upstream', { form: {} })).status).toBe(405);
  });

  it('a linked upstream identity signs in to an application: its tokens say amr ["fed"]', async () => {
    const browser = new BrowserSession(base);
    const application = demoAuthorization(base, { state: 'app-state', nonce: 'app-nonce' });
    const authorize = await browser.request(application.path);
    const interaction = authorize.location!;
    expect(interaction).toMatch(/^\/interaction\//);
    expect((await browser.request(interaction)).text).toContain('href="/login/upstream"');

    const back = await signInUpstream(browser, 'up-alice');
    expect(back.status).toBe(303);
    expect(back.location).toBe(interaction);
    const finished = await browser.request(interaction);
    const resumed = await browser.request(finished.location!);
    const tokenResponse = await application.redeem(resumed.location!);
    expect(tokenResponse.status).toBe(200);
    const tokens = tokenResponse.json;
    expect(decodeJwt(tokens.id_token)).toMatchObject({
      sub: demo.userId.alice,
      email: 'alice@acme.test',
      amr: ['fed'],
      acr: 'urn:latchkey:acr:1fa',
      nonce: 'app-nonce',
    });

    // Without an application waiting, the same sign-in leads to the account page.
    const standalone = new BrowserSession(base);
    await standalone.request('/login');
    const done = await signInUpstream(standalone, 'up-alice');
    expect(done.location).toBe('/account');
    const account = await standalone.request('/account');
    expect(account.status).toBe(200);
    expect(account.text).toContain('Signed in as <strong>alice@acme.test</strong> with your organization’s sign-in');
    expect(account.text).toContain(`<strong>up-alice</strong> at ${upstream.issuer}`);
  });

  it('an upstream account with the e-mail of an account here but another subject is not linked: 401, nothing created', async () => {
    const before = await stored();
    const browser = new BrowserSession(base);
    const refused = await signInUpstream(browser, 'up-impostor');
    expect(refused.status).toBe(401);
    expect(refused.text).toContain('This Acme SSO account is not linked to an account here.');
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(await stored()).toBe(before);
    // No session either.
    expect((await browser.request('/account')).location).toBe('/login');
  });

  it('a rule asking for the upstream sign-in as a second step offers it on the factor page', async () => {
    const browser = new BrowserSession(base);
    const first = await proveLink(browser, service.config.dataDir, 'root@latchkey.test');
    expect(first.location).toBe('/login/factors');
    const factors = await browser.request('/login/factors');
    expect(factors.text).toContain('<li>your organization’s sign-in</li>');
    expect(factors.text).toContain('<a id="upstream" href="/login/upstream">Sign in with Acme SSO</a>');
    expect((await signInUpstream(browser, 'up-root')).location).toBe('/account');
    expect((await browser.request('/account')).text).toContain(
      'Signed in as <strong>root@latchkey.test</strong> with a sign-in link or code by e-mail and your organization’s sign-in',
    );
  });

  it('linking from the account page: the signed-in account links its upstream identity, which then signs it in; unlinking ends that', async () => {
    const carol = await signedInByEmail('carol@globex.test');
    const page = await carol.request('/account');
    expect(page.text).toContain('No Acme SSO account is linked');
    expect(page.text).toContain('action="/account/upstream/link"');
    // Before the link, that upstream account signs nobody in.
    expect((await signInUpstream(new BrowserSession(base), 'up-carol')).status).toBe(401);

    const link = await carol.request('/account/upstream/link', { form: {} });
    expect(link.status).toBe(200);
    const continueTo = /<a id="continue" href="([^"]+)">/.exec(link.text)![1]!.replace(/&#38;/g, '&');
    expect(continueTo.startsWith(`${upstream.issuer}/`)).toBe(true);
    const linked = await carol.request(await upstream.authorize(continueTo, 'up-carol'));
    expect(linked.status).toBe(303);
    expect(linked.location).toBe('/account?done=upstream-linked');
    const after = await carol.request(linked.location!);
    expect(after.text).toContain('The upstream account is linked');
    expect(after.text).toContain(`<strong>up-carol</strong> at ${upstream.issuer}`);

    const viaUpstream = new BrowserSession(base);
    expect((await signInUpstream(viaUpstream, 'up-carol')).location).toBe('/account');
    expect((await viaUpstream.request('/account')).text).toContain('Signed in as <strong>carol@globex.test</strong>');

    // An identity linked to alice cannot be linked to carol as well.
    const before = await stored();
    const again = await carol.request('/account/upstream/link', { form: {} });
    const continueAgain = /<a id="continue" href="([^"]+)">/.exec(again.text)![1]!.replace(/&#38;/g, '&');
    const refused = await carol.request(await upstream.authorize(continueAgain, 'up-alice'));
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('already linked to another account');
    expect(await stored()).toBe(before);
    await pair.forgetFailures();

    const unlinked = await carol.request('/account/upstream/unlink', { form: { issuer: upstream.issuer, subject: 'up-carol' } });
    expect(unlinked.location).toBe('/account?done=upstream-unlinked');
    expect((await carol.request('/account')).text).toContain('No Acme SSO account is linked');
    // A success between refusals: from the second wrong one on, a source must pause (as with one-time tokens).
    await pair.forgetFailures();
    expect((await signInUpstream(new BrowserSession(base), 'up-carol')).status).toBe(401);
  });

  it('link and unlink refuse strangers, cross-site posts and bad input, changing nothing', async () => {
    const before = await stored();
    const stranger = new BrowserSession(base);
    expect((await stranger.request('/account/upstream/link', { form: {} })).status).toBe(401);
    expect((await stranger.request('/account/upstream/unlink', { form: { issuer: upstream.issuer, subject: 'up-alice' } })).status).toBe(
      401,
    );
    const alice = await signedInByEmail('alice@acme.test');
    expect((await alice.request('/account/upstream/link', { form: {}, headers: { origin: 'https://evil.test' } })).status).toBe(403);
    expect(
      (
        await alice.request('/account/upstream/unlink', {
          form: { issuer: upstream.issuer, subject: 'up-alice' },
          headers: { origin: 'https://evil.test' },
        })
      ).status,
    ).toBe(403);
    const forms: Record<string, string>[] = [
      {},
      { issuer: upstream.issuer },
      { issuer: upstream.issuer, subject: 'up-carol' },
      { issuer: 'https://other.example', subject: 'up-alice' },
      { issuer: upstream.issuer, subject: 'x'.repeat(300) },
    ];
    for (const form of forms) {
      expect((await alice.request('/account/upstream/unlink', { form })).status).toBe(404);
    }
    expect((await alice.request('/account/upstream/unlink', { method: 'GET' })).status).toBe(405);
    expect((await alice.request('/account/upstream/unlink', { form: { subject: 'x'.repeat(10_000) } })).status).toBe(413);
    expect(await stored()).toBe(before);

    // A link started by alice, finished in a browser where she is no longer signed in, links nothing.
    const link = await alice.request('/account/upstream/link', { form: {} });
    const continueTo = /<a id="continue" href="([^"]+)">/.exec(link.text)![1]!.replace(/&#38;/g, '&');
    const elsewhere = new BrowserSession(base);
    elsewhere.cookies.set('lk_upstream', alice.cookies.get('lk_upstream')!);
    expect((await elsewhere.request(await upstream.authorize(continueTo, 'up-carol'))).status).toBe(401);
    expect(await stored()).toBe(before);
  });
});
