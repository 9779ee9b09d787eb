import { createHash, randomBytes } from 'node:crypto';
import { eq, passkeys, seedDemoData, sql, users } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { outboxOf, tokenOf } from './support/outbox.js';
import { startLocalhostService, type TestService } from './support/service.js';

let service: TestService;
let base: string;
let outbox: ReturnType<typeof outboxOf>;

beforeAll(async () => {
  ({ service, base } = await startLocalhostService({ NODE_ENV: 'development' }));
  await seedDemoData(service.database);
  outbox = outboxOf(service.config.dataDir);
});
afterAll(() => service?.stop());

/** Signs a fresh browser in on the provider's own sign-in page with a magic link (no application waiting). */
async function signedInBrowser(email: string, browser = new BrowserSession(base)): Promise<BrowserSession> {
  expect((await browser.request('/login')).status).toBe(200);
  const before = outbox.count();
  expect((await browser.request('/ott/generate', { form: { username: email } })).status).toBe(303);
  const consumed = await browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before)) } });
  expect(consumed.status).toBe(303);
  expect(consumed.location).toBe('/account');
  return browser;
}

async function userId(email: string): Promise<string> {
  const [user] = await service.database.db.select({ id: users.id }).from(users).where(eq(users.email, email));
  return user!.id;
}

/** A stored credential as registration leaves it (the ceremony itself is proven in the Chromium tests). */
async function storedPasskey(email: string, label: string | null): Promise<string> {
  const id = randomBytes(16).toString('base64url');
  await service.database.db.insert(passkeys).values({
    id,
    userId: await userId(email),
    userHandle: randomBytes(16).toString('base64url'),
    publicKey: new Uint8Array(randomBytes(77)),
    deviceType: 'multiDevice',
    backedUp: true,
    aaguid: '00000000-0000-0000-0000-000000000000',
    label,
    rpId: 'localhost',
  });
  return id;
}

const labelOf = async (id: string) =>
  (await service.database.db.select({ label: passkeys.label }).from(passkeys).where(eq(passkeys.id, id)))[0]?.label;
const fingerprint = async () =>
  createHash('sha256')
    .update(JSON.stringify(await service.database.db.select().from(passkeys).orderBy(passkeys.id)))
    .digest('hex');

describe('the account page on the provider session (passkey management, sign-out)', () => {
  it('default deny for pages: without a provider session /account sends to sign in and the account forms answer 401', async () => {
    const guest = new BrowserSession(base);
    const page = await guest.request('/account');
    expect(page.status).toBe(303);
    expect(page.location).toBe('/login');
    const form = await guest.request('/account/passkeys/remove', { form: { id: 'abc' } });
    expect(form.status).toBe(401);
    expect(form.text).toContain('You are not signed in');
    // The sign-in page itself is public.
    const login = await guest.request('/login');
    expect(login.status).toBe(200);
    expect(login.text).toContain('action="/ott/generate"');
    expect(login.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('a sign-in on /login signs the browser in to the provider: /account says who and how, and an application then skips the login prompt', async () => {
    const browser = await signedInBrowser('alice@acme.test');
    expect([...browser.cookies.keys()]).toContain('_session');
    const page = await browser.request('/account');
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.text).toContain('Signed in as <strong>alice@acme.test</strong> with a sign-in link or code by e-mail');
    expect(page.text).toContain('href="/oidc/session/end"');
    // The demo client's authorization request goes straight back with a code: no second sign-in.
    const params = new URLSearchParams({
      client_id: 'latchkey-demo',
      response_type: 'code',
      redirect_uri: `${base}/callback`,
      scope: 'openid',
      code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
      code_challenge_method: 'S256',
      state: 's',
    });
    let next = (await browser.request(`/oidc/auth?${params}`)).location!;
    for (let hop = 0; hop < 3 && !next.startsWith(`${base}/callback`); hop++) next = (await browser.request(next)).location!;
    expect(next).toMatch(new RegExp(`^${base}/callback\\?code=`));
  });

  it('passkeys are listed, renamed and removed by form: one\'s own only, and someone else\'s is "not found"', async () => {
    const own = await storedPasskey('alice@acme.test', 'Laptop');
    const bobs = await storedPasskey('bob@acme.test', 'Bob phone');
    const browser = await signedInBrowser('alice@acme.test');
    const page = await browser.request('/account');
    expect(page.text).toContain('<strong>Laptop</strong>');
    expect(page.text).not.toContain('Bob phone');

    const renamed = await browser.request('/account/passkeys/rename', { form: { id: own, label: '  Work laptop <b> ' } });
    expect(renamed.status).toBe(303);
    expect(renamed.location).toBe('/account?done=renamed');
    expect(await labelOf(own)).toBe('Work laptop <b>');
    const after = await browser.request('/account?done=renamed');
    expect(after.text).toContain('The passkey was renamed.');
    expect(after.text).toContain('<strong>Work laptop &#60;b&#62;</strong>');

    for (const action of ['rename', 'remove'] as const) {
      const foreign = await browser.request(`/account/passkeys/${action}`, { form: { id: bobs, label: 'mine now' } });
      expect(foreign.status).toBe(404);
    }
    expect(await labelOf(bobs)).toBe('Bob phone');

    const removed = await browser.request('/account/passkeys/remove', { form: { id: own } });
    expect(removed.status).toBe(303);
    expect(removed.location).toBe('/account?done=removed');
    expect(await labelOf(own)).toBeUndefined();
    expect((await browser.request('/account/passkeys/remove', { form: { id: own } })).status).toBe(404);
  });

  it('bad input on the account forms is a 4xx with a clear message and changes nothing', async () => {
    const own = await storedPasskey('alice@acme.test', 'Keep me');
    const browser = await signedInBrowser('alice@acme.test');
    const before = await fingerprint();
    const cases: [string, Parameters<BrowserSession['request']>[1], number, string][] = [
      ['/account/passkeys/rename', { form: { id: own, label: 'x' }, headers: { origin: 'https://evil.test' } }, 403, 'Cross-site'],
      ['/account/passkeys/remove', { form: { id: own }, headers: { origin: 'null' } }, 403, 'Cross-site'],
      ['/account/passkeys/rename', { form: { id: 'not a passkey id!', label: 'x' } }, 400, 'passkey id'],
      ['/account/passkeys/remove', { form: {} }, 400, 'passkey id'],
      ['/account/passkeys/rename', { form: { id: own, label: 'x'.repeat(65) } }, 400, '1 to 64'],
      ['/account/passkeys/rename', { form: { id: own, label: '   ' } }, 400, '1 to 64'],
      ['/account/passkeys/rename', { form: { id: own, label: 'a\u0000b' } }, 400, '1 to 64'],
      ['/account/passkeys/rename', { form: { id: own, label: 'x'.repeat(10_000) } }, 413, ''],
      ['/account/passkeys/remove', { method: 'POST', headers: { 'content-type': 'text/plain', origin: new URL(base).origin } }, 415, ''],
      ['/account/passkeys/remove', { json: { id: [own] }, headers: { origin: new URL(base).origin } }, 400, ''],
      ['/account/passkeys/remove', { method: 'GET' }, 405, ''],
      ['/account', { method: 'POST', form: { id: own } }, 405, ''],
    ];
    for (const [path, init, status, message] of cases) {
      const answer = await browser.request(path, init);
      expect({ path, status: answer.status }).toEqual({ path, status });
      expect(answer.text).toContain(message);
    }
    expect(await fingerprint()).toBe(before);
  });

  it("signing in as someone else in the same browser ends the first person's session", async () => {
    const browser = await signedInBrowser('alice@acme.test');
    const aliceSession = browser.cookies.get('_session');
    const aliceSignature = browser.cookies.get('_session.sig');
    expect(aliceSignature).toBeDefined();
    await signedInBrowser('bob@acme.test', browser);
    expect(browser.cookies.get('_session')).not.toBe(aliceSession);
    expect((await browser.request('/account')).text).toContain('Signed in as <strong>bob@acme.test</strong>');
    // Alice's old session cookie (with its valid signature) signs nobody in any more: the session is gone.
    const replay = new BrowserSession(base);
    replay.cookies.set('_session', aliceSession!);
    replay.cookies.set('_session.sig', aliceSignature!);
    expect((await replay.request('/account')).status).toBe(303);
  });

  it('a suspended account loses its account page at once', async () => {
    const browser = await signedInBrowser('erin@acme.test');
    expect((await browser.request('/account')).status).toBe(200);
    await service.database.db.update(users).set({ suspended: true }).where(eq(users.email, 'erin@acme.test'));
    try {
      expect((await browser.request('/account')).status).toBe(303);
      expect((await browser.request('/account/passkeys/remove', { form: { id: 'abc' } })).status).toBe(401);
    } finally {
      await service.database.db.update(users).set({ suspended: false }).where(eq(users.email, 'erin@acme.test'));
    }
  });

  it('sign-out: the provider asks for confirmation (its own CSRF token); afterwards /account sends to sign in again', async () => {
    const browser = await signedInBrowser('carol@globex.test');
    const confirm = await browser.request('/oidc/session/end');
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Sign out of Latchkey in this browser?');
    expect(confirm.headers.get('content-security-policy')).toContain("default-src 'none'");
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(confirm.text)?.[1];
    expect(xsrf).toBeDefined();
    // Without the provider's token the confirmation is refused and the session stays.
    expect((await browser.request('/oidc/session/end/confirm', { form: { xsrf: 'forged', logout: 'yes' } })).status).toBe(400);
    expect((await browser.request('/account')).status).toBe(200);
    const done = await browser.request('/oidc/session/end/confirm', { form: { xsrf: xsrf!, logout: 'yes' } });
    expect(done.status).toBe(303);
    const signedOut = await browser.request(done.location!);
    expect(signedOut.text).toContain('You are signed out of Latchkey in this browser.');
    expect((await browser.request('/account')).status).toBe(303);
  });

  it('spec Multi-factor rules 6: credential changes on the account page need a sign-in from the last 5 minutes', async () => {
    // (bob: each sign-in here costs a generate request, at most 5 per address in 15 minutes)
    const own = await storedPasskey('bob@acme.test', 'Old sign-in');
    const browser = await signedInBrowser('bob@acme.test');
    // Age this browser's provider session by 10 minutes, as if it had signed in then.
    await service.database.db.execute(
      sql`update oidc_models set payload = jsonb_set(payload, '{loginTs}', to_jsonb((payload->>'loginTs')::bigint - 600)) where model = 'Session' and payload->>'accountId' = ${await userId('bob@acme.test')}`,
    );
    const refused = await browser.request('/account/passkeys/remove', { form: { id: own } });
    expect(refused.status).toBe(401);
    expect(refused.text).toContain('needs a sign-in from the last 5 minutes');
    expect(await labelOf(own)).toBe('Old sign-in');
    const options = await browser.request('/webauthn/register/options', {
      json: {},
      headers: { origin: new URL(base).origin, accept: 'application/json' },
    });
    expect(options.status).toBe(401);
    expect(options.headers.get('www-authenticate')).toContain('max_age=300');
    // The page itself still shows (reading is no credential change).
    expect((await browser.request('/account')).status).toBe(200);
  });

  it('passkey registration accepts the provider session as the signed-in caller (same origin only)', async () => {
    const browser = await signedInBrowser('alice@acme.test');
    const origin = new URL(base).origin;
    const options = await browser.request('/webauthn/register/options', { json: {}, headers: { origin, accept: 'application/json' } });
    expect(options.status).toBe(200);
    expect((JSON.parse(options.text) as { user: { name: string } }).user.name).toBe('alice@acme.test');
    const crossSite = await browser.request('/webauthn/register/options', {
      json: {},
      headers: { origin: 'https://evil.test', accept: 'application/json' },
    });
    expect(crossSite.status).toBe(403);
    const guest = await new BrowserSession(base).request('/webauthn/register/options', {
      json: {},
      headers: { origin, accept: 'application/json' },
    });
    expect(guest.status).toBe(401);
  });
});
