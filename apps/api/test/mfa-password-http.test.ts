import { createHash } from 'node:crypto';
import { eq, passwordCredentials, seedDemoData, sql, users } from '@latchkey/db';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { demoAuthorization } from './support/oidc.js';
import { outboxOf, tokenOf } from './support/outbox.js';
import { policyFile } from './support/policy-file.js';
import { startLocalhostService, type TestService } from './support/service.js';

let service: TestService;
let base: string;
const CAROL_PASSWORD = 'carol’s long passphrase 42';

beforeAll(async () => {
  // The "OTT plus password" alternative: admins sign in with a passkey alone, or a link and their password.
  const file = policyFile({
    rules: [
      {
        name: 'admins',
        appliesTo: { roles: ['OWNER', 'ADMIN'] },
        anyOf: [[{ factor: 'WEBAUTHN' }], [{ factor: 'OTT' }, { factor: 'PASSWORD' }]],
      },
    ],
  });
  ({ service, base } = await startLocalhostService({ NODE_ENV: 'development', AUTH_POLICY_FILE: file }));
  await seedDemoData(service.database);
});
afterAll(() => service?.stop());

/** A browser that has proven the link (or code) of `email`, optionally inside an application's authorization request. */
async function afterLink(email: string, browser = new BrowserSession(base)): Promise<{ browser: BrowserSession; next: string }> {
  const outbox = outboxOf(service.config.dataDir);
  if (browser.cookies.size === 0) await browser.request('/login');
  const before = outbox.count();
  await browser.request('/ott/generate', { form: { username: email } });
  const consumed = await browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, email)) } });
  return { browser, next: consumed.location! };
}

/** The stored password rows (hashes only), as one fingerprint. */
const stored = async () =>
  createHash('sha256')
    .update(JSON.stringify(await service.database.db.select().from(passwordCredentials).orderBy(passwordCredentials.userId)))
    .digest('hex');

const userId = async (email: string) =>
  (await service.database.db.select({ id: users.id }).from(users).where(eq(users.email, email)))[0]!.id;

describe('passwords as a later step of a sign-in (PASSWORD factor, amr pwd)', () => {
  it('an admin without a password sets the first one on the factor page (checked first: too short, differing, the e-mail), which completes the sign-in', async () => {
    const { browser, next } = await afterLink('carol@globex.test');
    expect(next).toBe('/login/factors');
    const page = await browser.request('/login/factors');
    expect(page.text).toContain('Still needed, any one of:');
    expect(page.text).toContain('<li>your password</li>');
    expect(page.text).toContain('action="/login/password/setup"');
    expect(page.text).toContain('autocomplete="new-password"');

    const before = await stored();
    for (const [fields, message] of [
      [{ password: 'short', confirm: 'short' }, 'at least 12 characters'],
      [{ password: CAROL_PASSWORD, confirm: `${CAROL_PASSWORD}!` }, 'The two passwords differ.'],
      [{ password: 'carol@globex.test', confirm: 'carol@globex.test' }, 'must not be your e-mail address'],
      [{ confirm: 'x' }, 'password is required.'],
    ] as const) {
      const refused = await browser.request('/login/password/setup', { form: fields });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain(message);
    }
    expect(await stored()).toBe(before);

    const set = await browser.request('/login/password/setup', { form: { password: CAROL_PASSWORD, confirm: CAROL_PASSWORD } });
    expect(set.status).toBe(303);
    expect(set.location).toBe('/account');
    const [row] = await service.database.db
      .select()
      .from(passwordCredentials)
      .where(eq(passwordCredentials.userId, await userId('carol@globex.test')));
    // Only the argon2id PHC string is stored, never the password.
    expect(row!.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(JSON.stringify(row)).not.toContain('passphrase');
    const account = await browser.request('/account');
    expect(account.text).toContain('with a sign-in link or code by e-mail and your password at');
    expect(account.text).toContain('A password is set.');
    // Once set, it is not set up again on the way.
    const again = await afterLink('carol@globex.test');
    expect(
      (
        await again.browser.request('/login/password/setup', {
          form: { password: 'another long password', confirm: 'another long password' },
        })
      ).status,
    ).toBe(409);
  });

  it('a wrong password is refused (401) and changes nothing; the right one gives the application an ID token with amr ["otp","pwd","mfa"] and acr 2fa', async () => {
    const browser = new BrowserSession(base);
    const application = demoAuthorization(base);
    const start = await browser.request(application.path);
    expect((await browser.request(start.location!)).status).toBe(200);
    const { next } = await afterLink('carol@globex.test', browser);
    expect(next).toBe('/login/factors');
    expect((await browser.request('/login/factors')).text).toContain('action="/login/password"');

    const before = await stored();
    const wrong = await browser.request('/login/password', { form: { password: `${CAROL_PASSWORD}x` } });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('The password is not valid.');
    expect(wrong.text).not.toContain(CAROL_PASSWORD);
    expect(await stored()).toBe(before);

    const right = await browser.request('/login/password', { form: { password: CAROL_PASSWORD } });
    expect(right.status).toBe(303);
    let location = right.location!;
    for (let hop = 0; hop < 5 && !location.startsWith(`${base}/callback`); hop++) location = (await browser.request(location)).location!;
    const tokens = await application.redeem(location);
    expect(tokens.status).toBe(200);
    const body = tokens.json;
    expect(decodeJwt(body.id_token)).toMatchObject({ amr: ['otp', 'pwd', 'mfa'], acr: 'urn:latchkey:acr:2fa', email: 'carol@globex.test' });
    expect(decodeJwt(body.access_token)).toMatchObject({ amr: ['otp', 'pwd', 'mfa'], acr: 'urn:latchkey:acr:2fa' });
  });

  it('a member whom no rule asks for a password never sees the step; the password is not a way in by itself', async () => {
    const { next } = await afterLink('bob@acme.test');
    expect(next).toBe('/account');
    // No sign-in in progress: a password alone proves nothing.
    const stranger = new BrowserSession(base);
    const refused = await stranger.request('/login/password', { form: { password: CAROL_PASSWORD } });
    expect(refused.status).toBe(401);
    expect(refused.text).toContain('No sign-in is in progress');
  });

  it('the account page sets, changes and removes a password (a credential change: same origin, a recent sign-in)', async () => {
    const { browser } = await afterLink('bob@acme.test');
    const page = await browser.request('/account');
    expect(page.text).toContain('No password is set.');
    expect(page.text).toContain('action="/account/password"');
    const before = await stored();
    expect(
      (
        await browser.request('/account/password', {
          form: { password: 'bob long password', confirm: 'bob long password' },
          headers: { origin: 'https://evil.test' },
        })
      ).status,
    ).toBe(403);
    expect((await browser.request('/account/password', { form: { password: 'short', confirm: 'short' } })).status).toBe(400);
    expect(
      (await browser.request('/account/password', { form: { password: 'bob long password', confirm: 'other long password' } })).status,
    ).toBe(400);
    expect((await browser.request('/account/password/remove', { form: {} })).status).toBe(404);
    expect(await stored()).toBe(before);

    expect(
      (await browser.request('/account/password', { form: { password: 'bob long password', confirm: 'bob long password' } })).location,
    ).toBe('/account?done=password-set');
    expect((await browser.request('/account')).text).toContain('A password is set.');
    const [first] = await service.database.db
      .select()
      .from(passwordCredentials)
      .where(eq(passwordCredentials.userId, await userId('bob@acme.test')));
    expect(
      (await browser.request('/account/password', { form: { password: 'bob’s newer password', confirm: 'bob’s newer password' } }))
        .location,
    ).toBe('/account?done=password-set');
    const [second] = await service.database.db
      .select()
      .from(passwordCredentials)
      .where(eq(passwordCredentials.userId, await userId('bob@acme.test')));
    expect(second!.passwordHash).not.toBe(first!.passwordHash);

    // A sign-in older than 5 minutes changes no password.
    await service.database.db.execute(
      sql`update oidc_models set payload = jsonb_set(payload, '{loginTs}', to_jsonb((payload->>'loginTs')::bigint - 600)) where model = 'Session'`,
    );
    const beforeStale = await stored();
    expect(
      (
        await browser.request('/account/password', {
          form: { password: 'a stolen session password', confirm: 'a stolen session password' },
        })
      ).status,
    ).toBe(401);
    expect((await browser.request('/account/password/remove', { form: {} })).status).toBe(401);
    expect(await stored()).toBe(beforeStale);

    const fresh = await afterLink('bob@acme.test');
    expect((await fresh.browser.request('/account/password/remove', { form: {} })).location).toBe('/account?done=password-removed');
    expect((await fresh.browser.request('/account')).text).toContain('No password is set.');
  });

  it('a step-up (acr_values) asks for a factor the account already has: no password or authenticator app is set up on the way (403, nothing stored)', async () => {
    const browser = new BrowserSession(base);
    const params = new URLSearchParams({
      client_id: 'latchkey-demo',
      response_type: 'code',
      redirect_uri: `${base}/callback`,
      scope: 'openid',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
      state: 'st',
      acr_values: 'urn:latchkey:acr:2fa',
    });
    const start = await browser.request(`/oidc/auth?${params}`);
    expect((await browser.request(start.location!)).status).toBe(200);
    const { next } = await afterLink('erin@acme.test', browser);
    expect(next).toBe('/login/factors');
    const page = await browser.request('/login/factors');
    expect(page.text).toContain('The application asks for a stronger sign-in.');
    expect(page.text).toContain('No password is set for this account.');
    expect(page.text).not.toContain('action="/login/password/setup"');
    expect(page.text).not.toContain('action="/login/totp/setup"');
    const before = await stored();
    const planted = await browser.request('/login/password/setup', {
      form: { password: 'planted long password', confirm: 'planted long password' },
    });
    expect(planted.status).toBe(403);
    expect((await browser.request('/login/totp/setup', { form: {} })).status).toBe(403);
    expect(await stored()).toBe(before);
  });

  it('bad input on the password endpoints is a 4xx with a clear message and changes nothing', async () => {
    const { browser } = await afterLink('alice@acme.test');
    const origin = new URL(base).origin;
    const before = await stored();
    const cases: [string, Parameters<BrowserSession['request']>[1], number, string][] = [
      ['/login/password', { form: {} }, 400, 'password is required.'],
      ['/login/password', { form: { password: 'x'.repeat(1025) } }, 400, 'password is too long.'],
      ['/login/password', { json: { password: 12345678 }, headers: { origin } }, 400, 'must be a string'],
      ['/login/password', { json: [], headers: { origin } }, 400, 'JSON object'],
      ['/login/password', { form: { password: 'x'.repeat(20_000) } }, 413, ''],
      ['/login/password', { form: { password: 'anything at all' }, headers: { origin: 'https://evil.test' } }, 403, 'Cross-site'],
      ['/login/password', { method: 'POST', headers: { 'content-type': 'text/plain', origin } }, 415, ''],
      ['/login/password', { method: 'GET' }, 405, ''],
      ['/login/password/setup', { form: { password: 'a long enough password' } }, 400, 'The two passwords differ.'],
      ['/account/password', { json: { password: ['x'] }, headers: { origin } }, 400, 'must be a string'],
    ];
    for (const [target, init, status, message] of cases) {
      const answer = await browser.request(target, init);
      expect({ target, status: answer.status }).toEqual({ target, status });
      expect(answer.text).toContain(message);
    }
    expect(await stored()).toBe(before);
  });

  // Last: it stops this source (127.0.0.1) for the rest of the file.
  it('rate limit and lockout: wrong passwords pause, then stop, the source (429 with Retry-After), even for the right one', async () => {
    const { browser } = await afterLink('carol@globex.test');
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let attempt = 0; attempt < 8; attempt++) {
      const answer = await browser.request('/login/password', {
        form: { password: `wrong password ${attempt}` },
        headers: { accept: 'application/json' },
      });
      statuses.push(answer.status);
      if (answer.status === 429) retryAfter = answer.headers.get('retry-after');
    }
    expect(statuses[0]).toBe(401);
    expect(statuses).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect((await browser.request('/login/password', { form: { password: CAROL_PASSWORD } })).status).toBe(429);
  });
});
