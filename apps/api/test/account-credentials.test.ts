import { createHash } from 'node:crypto';
import { recoveryCodes, rememberedDevices, seedDemoData, sql, totpCredentials } from '@latchkey/db';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { proveLink } from './support/link-sign-in.js';
import { startLocalhostService, type TestService } from './support/service.js';

let service: TestService;
let base: string;

beforeAll(async () => {
  ({ service, base } = await startLocalhostService({ NODE_ENV: 'development' }));
  await seedDemoData(service.database);
});
afterAll(() => service?.stop());

async function signedInBrowser(email: string): Promise<BrowserSession> {
  const browser = new BrowserSession(base);
  expect((await proveLink(browser, service.config.dataDir, email)).location).toBe('/account');
  return browser;
}

/** A fingerprint of every stored second factor. */
const stored = async () => {
  const db = service.database.db;
  const rows = [
    await db.select().from(totpCredentials).orderBy(totpCredentials.userId),
    await db.select().from(recoveryCodes).orderBy(recoveryCodes.codeHash),
    await db.select().from(rememberedDevices).orderBy(rememberedDevices.id),
  ];
  return createHash('sha256').update(JSON.stringify(rows)).digest('hex');
};

describe('second factors on the account page (TOTP enrolment, recovery codes, remembered browsers)', () => {
  it('an authenticator app is set up with a QR code and a confirming code, only once; removed on request', async () => {
    const browser = await signedInBrowser('erin@acme.test');
    expect((await browser.request('/account')).text).toContain('No authenticator app is set up.');
    const setup = await browser.request('/account/totp/setup', { form: {} });
    expect(setup.status).toBe(200);
    expect(setup.headers.get('cache-control')).toBe('no-store');
    expect(setup.text).toContain('<svg');
    const secret = /<code id="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(setup.text)![1]!.replace(/ /g, '');
    // The secret is stored sealed, never in clear.
    expect(JSON.stringify(await service.database.db.select().from(totpCredentials))).not.toContain(secret);

    const wrong = await browser.request('/account/totp/confirm', {
      form: { code: String((Number(await generate({ secret })) + 1) % 1_000_000).padStart(6, '0') },
    });
    expect(wrong.status).toBe(400);
    expect((await browser.request('/account')).text).toContain('No authenticator app is set up.');
    const confirmed = await browser.request('/account/totp/confirm', { form: { code: await generate({ secret }) } });
    expect(confirmed.location).toBe('/account?done=totp-added');
    expect((await browser.request('/account')).text).toContain('An authenticator app is set up.');
    expect((await browser.request('/account/totp/setup', { form: {} })).status).toBe(409);

    expect((await browser.request('/account/totp/remove', { form: {} })).location).toBe('/account?done=totp-removed');
    expect((await browser.request('/account/totp/remove', { form: {} })).status).toBe(404);
  });

  it('recovery codes are shown once, ten of them, and counted on the page', async () => {
    const browser = await signedInBrowser('bob@acme.test');
    const made = await browser.request('/account/recovery-codes', { form: {} });
    expect(made.status).toBe(200);
    expect(made.headers.get('cache-control')).toBe('no-store');
    const codes = [...made.text.matchAll(/<li><code>([0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4})<\/code><\/li>/g)].map((match) => match[1]);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    const page = await browser.request('/account');
    expect(page.text).toContain('10 recovery codes left.');
    expect(page.text).not.toContain(codes[0]!);
  });

  it("bad input on the account's credential forms: 4xx, a clear message, nothing stored", async () => {
    const browser = await signedInBrowser('alice@acme.test');
    const before = await stored();
    const origin = new URL(base).origin;
    const cases: [string, Parameters<BrowserSession['request']>[1], number, string][] = [
      ['/account/totp/confirm', { form: { code: '123456' } }, 400, 'No authenticator app'],
      ['/account/totp/confirm', { form: { code: '<b>' } }, 400, ''],
      ['/account/totp/setup', { form: {}, headers: { origin: 'https://evil.test' } }, 403, 'Cross-site'],
      ['/account/recovery-codes', { form: {}, headers: { origin: 'https://evil.test' } }, 403, 'Cross-site'],
      ['/account/devices/forget', { form: { id: 'not-a-uuid' } }, 404, 'not remembered'],
      ['/account/devices/forget', { form: { id: '00000000-0000-4000-8000-000000000000' } }, 404, 'not remembered'],
      ['/account/totp/setup', { method: 'POST', headers: { 'content-type': 'text/plain', origin } }, 415, ''],
      ['/account/recovery-codes', { json: { x: 1 }, headers: { origin } }, 400, 'must be a string'],
      ['/account/totp/setup', { method: 'GET' }, 405, ''],
    ];
    for (const [target, init, status, message] of cases) {
      const answer = await browser.request(target, init);
      expect({ target, status: answer.status }).toEqual({ target, status });
      expect(answer.text).toContain(message);
    }
    // A sign-in older than 5 minutes changes no credential.
    await service.database.db.execute(
      sql`update oidc_models set payload = jsonb_set(payload, '{loginTs}', to_jsonb((payload->>'loginTs')::bigint - 600)) where model = 'Session'`,
    );
    for (const target of ['/account/totp/setup', '/account/recovery-codes', '/account/devices/forget']) {
      const stale = await browser.request(target, { form: { id: '00000000-0000-4000-8000-000000000000' } });
      expect({ target, status: stale.status }).toEqual({ target, status: 401 });
    }
    // Without a session, nothing at all.
    expect((await new BrowserSession(base).request('/account/recovery-codes', { form: {} })).status).toBe(401);
    expect(await stored()).toBe(before);
  });
});
