import { createHash } from 'node:crypto';
import { confirmTotpEnrolment, deriveTotpKey, generateRecoveryCodes, startTotpEnrolment } from '@latchkey/auth';
import { eq, recoveryCodes, seedDemoData, totpCredentials, users } from '@latchkey/db';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { proveLink } from './support/link-sign-in.js';
import { policyFile } from './support/policy-file.js';
import { startLocalhostService, type TestService } from './support/service.js';

let service: TestService;
let base: string;
let carolId: string;
let secret: string;

/** A step of the authenticator app: a code for `offset` time steps from now. */
const totpCode = (offset = 0) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset * 30 });

beforeAll(async () => {
  const file = policyFile({
    rules: [
      {
        name: 'admins',
        appliesTo: { roles: ['OWNER', 'ADMIN'] },
        anyOf: [
          [{ factor: 'OTT' }, { factor: 'TOTP' }],
          [{ factor: 'OTT' }, { factor: 'RECOVERY_CODE' }],
        ],
      },
    ],
  });
  ({ service, base } = await startLocalhostService({ NODE_ENV: 'development', AUTH_POLICY_FILE: file }));
  await seedDemoData(service.database);
  [{ id: carolId }] = (await service.database.db.select({ id: users.id }).from(users).where(eq(users.email, 'carol@globex.test'))) as [
    { id: string },
  ];
  // carol (ADMIN of globex) has an authenticator app, set up as the account page does it.
  const key = deriveTotpKey(String(service.privateJwk.d));
  ({ secret } = await startTotpEnrolment(service.database.db, key, {
    userId: carolId,
    accountName: 'carol@globex.test',
    issuer: 'Latchkey',
  }));
  await confirmTotpEnrolment(service.database.db, key, {
    userId: carolId,
    code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) - 30 }),
  });
});
afterAll(() => service?.stop());

/**
 * A browser that has proven the first factor (carol, unless said otherwise) and stands on the factor page. (Each
 * costs a generate request: at most 5 per address and 15 minutes, so the lockout test signs in as alice.)
 */
async function halfSignedIn(email = 'carol@globex.test'): Promise<BrowserSession> {
  const browser = new BrowserSession(base);
  const consumed = await proveLink(browser, service.config.dataDir, email);
  expect(consumed.location).toBe('/login/factors');
  return browser;
}

/** A fingerprint of the second factors stored (all accounts). */
const stored = async () => {
  const totp = await service.database.db.select().from(totpCredentials).orderBy(totpCredentials.userId);
  const codes = await service.database.db.select().from(recoveryCodes).orderBy(recoveryCodes.codeHash);
  return createHash('sha256').update(JSON.stringify({ totp, codes })).digest('hex');
};

describe('second factors over HTTP (spec Multi-factor rules 1-4)', () => {
  it('the factor page offers exactly what the rule still needs; the page needs a sign-in in progress', async () => {
    expect((await new BrowserSession(base).request('/login/factors')).location).toBe('/login');
    const browser = await halfSignedIn();
    const page = await browser.request('/login/factors');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Signed in as <strong>carol@globex.test</strong> with a sign-in link or code by e-mail.');
    expect(page.text).toContain('action="/login/totp"');
    // No recovery codes yet: that form is not offered.
    expect(page.text).not.toContain('action="/login/recovery-code"');
    expect(page.headers.get('cache-control')).toBe('no-store');
    // carol has an authenticator app: it is not set up a second time on the way.
    const before = await stored();
    const setup = await browser.request('/login/totp/setup', { form: {} });
    expect(setup.status).toBe(409);
    expect(setup.text).toContain('already set up');
    expect(await stored()).toBe(before);
  });

  it('TOTP: a wrong code is refused (401) and changes nothing; the right one completes the sign-in; the same code again is a replay (401)', async () => {
    const browser = await halfSignedIn();
    const before = await stored();
    const wrong = String((Number(await totpCode()) + 1) % 1_000_000).padStart(6, '0');
    const refused = await browser.request('/login/totp', { form: { code: wrong } });
    expect(refused.status).toBe(401);
    expect(await stored()).toBe(before);
    const code = await totpCode(1);
    const accepted = await browser.request('/login/totp', { form: { code } });
    expect(accepted.status).toBe(303);
    expect(accepted.location).toBe('/account');
    const account = await browser.request('/account');
    expect(account.text).toContain(
      'Signed in as <strong>carol@globex.test</strong> with a sign-in link or code by e-mail and a code from your authenticator app at',
    );

    const again = await halfSignedIn();
    expect((await again.request('/login/totp', { form: { code } })).status).toBe(401);
  });

  it('recovery codes: each works once', async () => {
    const [first] = await generateRecoveryCodes(service.database.db, carolId);
    const browser = await halfSignedIn();
    expect((await browser.request('/login/factors')).text).toContain('action="/login/recovery-code"');
    const used = await browser.request('/login/recovery-code', { form: { code: first!.toUpperCase() } });
    expect(used.status).toBe(303);
    expect(used.location).toBe('/account');
    const again = await halfSignedIn();
    expect((await again.request('/login/recovery-code', { form: { code: first! } })).status).toBe(401);
  });

  it('bad input on every factor endpoint is a 4xx with a clear message and changes nothing', async () => {
    const browser = await halfSignedIn('alice@acme.test');
    const before = await stored();
    const origin = new URL(base).origin;
    const cases: [string, Parameters<BrowserSession['request']>[1], number, string][] = [
      ['/login/totp', { form: { code: '12345' } }, 400, '6 digits'],
      ['/login/totp', { form: { code: 'abcdef' } }, 400, '6 digits'],
      ['/login/totp', { form: {} }, 400, '6 digits'],
      ['/login/totp', { json: { code: 123456 }, headers: { origin } }, 400, 'must be a string'],
      ['/login/totp', { form: { code: '123456' }, headers: { origin: 'https://evil.test' } }, 403, 'Cross-site'],
      ['/login/totp', { form: { code: '1'.repeat(10_000) } }, 413, ''],
      ['/login/totp', { method: 'POST', headers: { 'content-type': 'text/plain', origin } }, 415, ''],
      ['/login/totp', { method: 'GET' }, 405, ''],
      ['/login/recovery-code', { form: { code: '<script>' } }, 400, 'recovery code'],
      ['/login/totp/confirm', { form: { code: '12' } }, 400, '6 digits'],
      ['/login/totp/setup', { form: {}, headers: { origin: 'null' } }, 403, 'Cross-site'],
      ['/login/factors', { method: 'POST', form: {} }, 405, ''],
    ];
    for (const [target, init, status, message] of cases) {
      const answer = await browser.request(target, init);
      expect({ target, status: answer.status }).toEqual({ target, status });
      expect(answer.text).toContain(message);
    }
    // Without a sign-in in progress there is nothing to add a factor to.
    expect((await new BrowserSession(base).request('/login/totp', { form: { code: '123456' } })).status).toBe(401);
    expect(await stored()).toBe(before);
  });

  it('rate limit and lockout: wrong codes pause, then stop, the source (429 with Retry-After)', async () => {
    const browser = await halfSignedIn('alice@acme.test');
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let attempt = 0; attempt < 8; attempt++) {
      const answer = await browser.request('/login/totp', { form: { code: '000000' }, headers: { accept: 'application/json' } });
      statuses.push(answer.status);
      if (answer.status === 429) retryAfter = answer.headers.get('retry-after');
    }
    expect(statuses[0]).toBe(401);
    expect(statuses).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    // Even a right answer is refused while the source is stopped.
    const recovery = await browser.request('/login/totp', { form: { code: '123456' } });
    expect(recovery.status).toBe(429);
  });
});
