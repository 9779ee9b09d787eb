import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { linkFederatedIdentity } from '@latchkey/auth';
import { count, federatedIdentities, seedDemoData, users } from '@latchkey/db';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { demoAuthorization } from './support/oidc.js';
import { BrowserSession, freePort } from './support/browser-session.js';
import { demoOf, type Demo } from './support/demo.js';
import { outboxOf, tokenOf } from './support/outbox.js';
import { startTestService, type TestService } from './support/service.js';
import { startUpstreamProvider, type UpstreamProvider } from '@latchkey/auth/testing';

/** A sign-in policy file as an operator writes it. */
function policyFile(policy: unknown): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'latchkey-policy-')), 'auth-policy.json');
  writeFileSync(file, JSON.stringify(policy));
  return file;
}

describe('configuration of the upstream OpenID provider', () => {
  const load = (env: Record<string, string>) => () =>
    loadConfig({ env: { NODE_ENV: 'test', ...env }, readFile: (file) => readFileSync(file, 'utf8') });
  const upstreamEnv = { UPSTREAM_ISSUER: 'https://accounts.example.com', UPSTREAM_CLIENT_ID: 'latchkey', UPSTREAM_CLIENT_SECRET: 'secret' };
  const requiring = policyFile({ rules: [{ name: 'sso', appliesTo: { everyone: true }, anyOf: [[{ factor: 'AUTHORIZATION_CODE' }]] }] });

  it('a rule requiring AUTHORIZATION_CODE stops start-up without UPSTREAM_ISSUER, and is accepted with it', () => {
    expect(load({ AUTH_POLICY_FILE: requiring })).toThrow(/requires AUTHORIZATION_CODE, which nothing on this server contributes/);
    expect(load({ AUTH_POLICY_FILE: requiring, ...upstreamEnv })).not.toThrow();
    const config = load({ ...upstreamEnv, UPSTREAM_NAME: 'Acme SSO' })();
    expect(config.auth.upstream).toEqual({
      issuer: 'https://accounts.example.com',
      clientId: 'latchkey',
      clientSecret: 'secret',
      name: 'Acme SSO',
    });
    // The button is named after the issuer's host by default.
    expect(load(upstreamEnv)().auth.upstream?.name).toBe('accounts.example.com');
    expect(load({})().auth.upstream).toBeUndefined();
  });

  it('an incomplete or unsafe upstream configuration stops start-up with a message naming it', () => {
    expect(load({ UPSTREAM_ISSUER: 'https://accounts.example.com' })).toThrow(
      /UPSTREAM_ISSUER, UPSTREAM_CLIENT_ID and UPSTREAM_CLIENT_SECRET go together/,
    );
    expect(load({ UPSTREAM_CLIENT_ID: 'x', UPSTREAM_CLIENT_SECRET: 'y' })).toThrow(/go together/);
    expect(load({ UPSTREAM_NAME: 'Acme SSO' })).toThrow(/UPSTREAM_NAME: only used with UPSTREAM_ISSUER/);
    expect(load({ ...upstreamEnv, UPSTREAM_ISSUER: 'http://accounts.example.com' })).toThrow(/UPSTREAM_ISSUER: must be an https URL/);
    expect(load({ ...upstreamEnv, UPSTREAM_ISSUER: 'accounts.example.com' })).toThrow(
      /UPSTREAM_ISSUER: "accounts.example.com" is not a URL/,
    );
    expect(load({ ...upstreamEnv, UPSTREAM_ISSUER: 'https://accounts.example.com/?tenant=1' })).toThrow(
      /no query, fragment or credentials/,
    );
    expect(load({ ...upstreamEnv, UPSTREAM_ISSUER: 'http://127.0.0.1:8080' })).not.toThrow();
  });
});

/** The upstream accounts of every test: alice's is linked to her; the impostor reports bob's address. */
const UPSTREAM_ACCOUNTS = [
  { sub: 'up-alice', email: 'alice@acme.test' },
  // Another upstream account reporting bob's address: it must never sign bob in.
  { sub: 'up-impostor', email: 'bob@acme.test' },
  { sub: 'up-carol', email: 'carol@upstream.test' },
  { sub: 'up-root', email: 'root@latchkey.test' },
];

interface Pair {
  service: TestService;
  base: string;
  upstream: UpstreamProvider;
  demo: Demo;
  /** what nothing but a successful link may change: the accounts and the links */
  stored(): Promise<string>;
  /** GET /login/upstream in `browser`: the upstream authorization URL it is sent to */
  startUpstream(browser: BrowserSession): Promise<string>;
  /** a whole upstream sign-in of `sub` in `browser`: the answer of Latchkey's callback */
  signInUpstream(browser: BrowserSession, sub: string): Promise<Awaited<ReturnType<BrowserSession['request']>>>;
  /** a successful sign-in from 127.0.0.1, which forgets that source's failures (as after a one-time token) */
  forgetFailures(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A Latchkey service with an upstream oidc-provider of its own (UPSTREAM_NAME "Acme SSO"); up-alice and up-root
 * are linked. Each suite gets its own pair: the suites' callbacks count against 127.0.0.1 like one-time tokens.
 */
async function startPair(env: Record<string, string> = {}): Promise<Pair> {
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const upstream = await startUpstreamProvider({ redirectUri: `${base}/login/upstream/callback`, accounts: UPSTREAM_ACCOUNTS });
  const service = await startTestService({
    NODE_ENV: 'development',
    PORT: String(port),
    PUBLIC_URL: base,
    UPSTREAM_ISSUER: upstream.issuer,
    UPSTREAM_CLIENT_ID: upstream.clientId,
    UPSTREAM_CLIENT_SECRET: upstream.clientSecret,
    UPSTREAM_NAME: 'Acme SSO',
    ...env,
  });
  await seedDemoData(service.database);
  const demo = await demoOf(service);
  await linkFederatedIdentity(service.database.db, { issuer: upstream.issuer, subject: 'up-alice', userId: demo.userId.alice });
  await linkFederatedIdentity(service.database.db, { issuer: upstream.issuer, subject: 'up-root', userId: demo.userId.root });

  async function startUpstream(browser: BrowserSession): Promise<string> {
    const start = await browser.request('/login/upstream');
    expect(start.status).toBe(303);
    expect(start.location!.startsWith(`${upstream.issuer}/`)).toBe(true);
    return start.location!;
  }
  async function signInUpstream(browser: BrowserSession, sub: string) {
    const callback = await upstream.authorize(await startUpstream(browser), sub);
    return browser.request(callback);
  }
  return {
    service,
    base,
    upstream,
    demo,
    async stored() {
      const db = service.database.db;
      const [accounts] = await db.select({ n: count() }).from(users);
      const links = await db.select().from(federatedIdentities).orderBy(federatedIdentities.subject);
      return JSON.stringify({ accounts: accounts!.n, links });
    },
    startUpstream,
    signInUpstream,
    async forgetFailures() {
      expect((await signInUpstream(new BrowserSession(base), 'up-alice')).location).toBe('/account');
    },
    async stop() {
      await service.stop();
      await upstream.close();
    },
  };
}

describe('sign-in through an upstream OpenID provider (issue 5: AUTHORIZATION_CODE, linked by issuer + subject)', () => {
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
    const outbox = outboxOf(service.config.dataDir);
    const browser = new BrowserSession(base);
    await browser.request('/login');
    const before = outbox.count();
    await browser.request('/ott/generate', { form: { username: email } });
    expect((await browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, email)) } })).location).toBe('/account');
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
    const outbox = outboxOf(service.config.dataDir);
    const browser = new BrowserSession(base);
    await browser.request('/login');
    const before = outbox.count();
    await browser.request('/ott/generate', { form: { username: 'root@latchkey.test' } });
    const first = await browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, 'root@latchkey.test')) } });
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

describe('upstream callbacks that do not belong to this browser, replays and cancellations (4xx, nothing changed)', () => {
  let pair: Pair;
  let base: string;
  let upstream: UpstreamProvider;

  beforeAll(async () => {
    pair = await startPair();
    ({ base, upstream } = pair);
  });
  afterAll(() => pair?.stop());

  const stored = () => pair.stored();
  const startUpstream = (browser: BrowserSession) => pair.startUpstream(browser);
  const signInUpstream = (browser: BrowserSession, sub: string) => pair.signInUpstream(browser, sub);

  it('a callback taken to another browser (state) or with its state changed is refused; the right browser still signs in', async () => {
    const before = await stored();
    const mine = new BrowserSession(base);
    const theirs = new BrowserSession(base);
    await startUpstream(theirs);
    const callback = await upstream.authorize(await startUpstream(mine), 'up-alice');
    const stolen = await theirs.request(callback);
    expect(stolen.status).toBe(400);
    expect(stolen.text).toContain('does not belong to a sign-in started in this browser');
    // The refusal is logged without the callback's parameters: that code is still good for the right browser.
    expect(pair.service.logText()).toContain('upstream sign-in refused');
    expect(pair.service.logText()).not.toContain(new URL(callback).searchParams.get('code')!);
    expect((await theirs.request('/account')).location).toBe('/login');
    // The code was not redeemed: the browser that asked for it still signs in with it.
    expect((await mine.request(callback)).location).toBe('/account');

    const again = new BrowserSession(base);
    const next = await upstream.authorize(await startUpstream(again), 'up-alice');
    const tampered = new URL(next);
    tampered.searchParams.set('state', randomBytes(32).toString('base64url'));
    const keep = again.cookies.get('lk_upstream')!;
    expect((await again.request(tampered.href)).status).toBe(400);
    // That answer used up the sealed request: put it back, as a browser replaying it would.
    again.cookies.set('lk_upstream', keep);
    expect((await again.request(next)).location).toBe('/account');
    expect(await stored()).toBe(before);
  });

  it('a replayed callback is refused, with or without the sealed request it came with', async () => {
    const browser = new BrowserSession(base);
    const callback = await upstream.authorize(await startUpstream(browser), 'up-alice');
    const sealed = browser.cookies.get('lk_upstream')!;
    expect((await browser.request(callback)).location).toBe('/account');
    expect(browser.cookies.has('lk_upstream')).toBe(false);

    const again = await browser.request(callback);
    expect(again.status).toBe(400);
    expect(again.text).toContain('No sign-in with Acme SSO is in progress in this browser');
    await pair.forgetFailures();
    // Even with the cookie kept back, the code is used up at the upstream provider.
    const replayer = new BrowserSession(base);
    replayer.cookies.set('lk_upstream', sealed);
    const replayed = await replayer.request(callback);
    expect(replayed.status).toBe(400);
    expect((await replayer.request('/account')).location).toBe('/login');
    await pair.forgetFailures();
  });

  it('a sign-in cancelled at the upstream provider (error=access_denied) is a 401; a forged error a 400', async () => {
    const before = await stored();
    const browser = new BrowserSession(base);
    const back = await upstream.cancel(await startUpstream(browser));
    expect(new URL(back).searchParams.get('error')).toBe('access_denied');
    const cancelled = await browser.request(back);
    expect(cancelled.status).toBe(401);
    expect(cancelled.text).toContain('The sign-in at Acme SSO was cancelled or refused.');
    await pair.forgetFailures();
    await startUpstream(browser);
    const forged = await browser.request('/login/upstream/callback?error=access_denied&error_description=%3Cscript%3E');
    expect(forged.status).toBe(400);
    expect(forged.text).not.toContain('<script>');
    expect(await stored()).toBe(before);
    await pair.forgetFailures();
  });

  it('callbacks count against their source like one-time tokens: wrong ones pause, then stop it (429 with Retry-After)', async () => {
    const before = await stored();
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let attempt = 0; attempt < 8; attempt++) {
      const answer = await new BrowserSession(base).request('/login/upstream/callback?code=x&state=y');
      statuses.push(answer.status);
      if (answer.status === 429) retryAfter = answer.headers.get('retry-after');
    }
    expect(statuses[0]).toBe(400);
    expect(statuses).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    // Even a right callback is refused while the source is stopped, and it links or creates nothing.
    const refused = await signInUpstream(new BrowserSession(base), 'up-alice');
    expect(refused.status).toBe(429);
    expect(await stored()).toBe(before);
  });
});
