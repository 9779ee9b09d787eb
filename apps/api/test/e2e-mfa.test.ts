import { generateRecoveryCodes } from '@latchkey/auth';
import { eq, seedDemoData, sql, users } from '@latchkey/db';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPlatformAuthenticator, demoSignInByLink, graphqlFromDemoPage, hasChromium, launchChromium } from './support/chromium.js';
import { COST_REPORTED } from './support/cost.js';
import { outboxOf } from './support/outbox.js';
import { policyFile } from './support/policy-file.js';
import { startLocalhostService, type TestService } from './support/service.js';

/** The rule: organization owners and admins (and super-admins) sign in with a passkey alone, or with OTT + TOTP. */
const ADMINS_RULE = {
  rules: [
    {
      name: 'admins',
      appliesTo: { roles: ['OWNER', 'ADMIN'], superAdmins: true },
      anyOf: [[{ factor: 'WEBAUTHN' }], [{ factor: 'OTT' }, { factor: 'TOTP' }], [{ factor: 'OTT' }, { factor: 'RECOVERY_CODE' }]],
    },
    // A validity duration (spec Multi-factor rules 2): erin's link counts for a minute.
    {
      name: 'erin-fresh',
      appliesTo: { users: ['erin@acme.test'] },
      anyOf: [[{ factor: 'OTT', maxAgeSeconds: 60 }], [{ factor: 'WEBAUTHN' }]],
    },
  ],
};

describe.runIf(hasChromium)('end to end in Chromium: multi-factor rules (spec Multi-factor rules 1-3, 7)', () => {
  let service: TestService;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    ({ service, base } = await startLocalhostService({ NODE_ENV: 'development', AUTH_POLICY_FILE: policyFile(ADMINS_RULE) }));
    await seedDemoData(service.database);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  const signInByLink = (page: Page, email: string) => demoSignInByLink(page, base, outboxOf(service.config.dataDir), email);

  const claimsOf = async (page: Page) => {
    await expect.poll(() => page.locator('#claims').textContent(), { timeout: 10_000 }).toMatch(/amr/);
    return JSON.parse((await page.locator('#claims').textContent())!) as { amr: string[]; acr: string; auth_time: number };
  };

  it('an admin signing in with a link is sent to TOTP (set up on the way), then gets amr ["otp","mfa"] and the two-factor acr; a passkey alone meets the rule with amr ["swk"]', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await addPlatformAuthenticator(context, page);

    // carol is ADMIN of globex: the link alone is not enough.
    await signInByLink(page, 'carol@globex.test');
    await page.waitForURL(`${base}/login/factors`);
    expect(await page.locator('main').textContent()).toContain('Your account needs one more step to sign in.');
    expect(await page.locator('#still-needed li').allTextContents()).toEqual([
      'a passkey',
      'a code from your authenticator app',
      'a recovery code',
    ]);

    // No authenticator app yet: set one up on the way (the QR code and the key are on the page).
    await page.getByRole('button', { name: 'Set up an authenticator app now' }).click();
    await expect.poll(() => page.locator('#totp-qr svg').count()).toBe(1);
    const secret = (await page.locator('#totp-secret').textContent())!.replace(/\s+/g, '');
    await page.getByLabel('The 6-digit code your app shows now').fill(await generate({ secret }));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(`${base}/`, { timeout: 15_000 });
    await expect.poll(() => page.locator('#who').textContent(), { timeout: 10_000 }).toBe('carol@globex.test');
    const twoFactor = await claimsOf(page);
    expect(twoFactor).toMatchObject({ amr: ['otp', 'mfa'], acr: 'urn:latchkey:acr:2fa' });
    const viewer = await graphqlFromDemoPage(page, '{ viewer { amr acr } }');
    expect(viewer.json).toEqual({ data: { viewer: { amr: ['otp', 'mfa'], acr: 'urn:latchkey:acr:2fa' } }, extensions: COST_REPORTED });

    // A passkey, then sign out and sign in with the passkey alone: the rule is met by it.
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await expect.poll(() => page.locator('#passkey-status').textContent(), { timeout: 10_000 }).toBe('Passkey added.');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(`${base}/`, { timeout: 10_000 });
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/interaction\//);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${base}/`, { timeout: 15_000 });
    expect(await claimsOf(page)).toMatchObject({ amr: ['swk'], acr: 'urn:latchkey:acr:phr' });

    // Next time by link again: the app is set up now, so its code is asked for (not set up again).
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(`${base}/`, { timeout: 10_000 });
    await signInByLink(page, 'carol@globex.test');
    await page.waitForURL(`${base}/login/factors`);
    // The code of the next time step: the step used at set-up is spent (no replay).
    await page.getByLabel('Code from your authenticator app').fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${base}/`, { timeout: 15_000 });
    expect(await claimsOf(page)).toMatchObject({ amr: ['otp', 'mfa'], acr: 'urn:latchkey:acr:2fa' });
    await context.close();
  });

  it('spec Multi-factor rules 5: a remembered browser skips the second step, a fresh browser does not, and a step-up always asks', async () => {
    const [carol] = await service.database.db.select({ id: users.id }).from(users).where(eq(users.email, 'carol@globex.test'));
    const codes = await generateRecoveryCodes(service.database.db, carol!.id);
    const context = await browser.newContext();
    const page = await context.newPage();
    await signInByLink(page, 'carol@globex.test');
    await page.waitForURL(`${base}/login/factors`);
    await page.getByLabel('Recovery code').fill(codes[0]!);
    await page.locator('form[action="/login/recovery-code"] input[name="remember"]').check();
    await page.getByRole('button', { name: 'Use the recovery code' }).click();
    await page.waitForURL(`${base}/`, { timeout: 15_000 });
    expect(await claimsOf(page)).toMatchObject({ amr: ['otp', 'mfa'], acr: 'urn:latchkey:acr:2fa' });
    expect((await context.cookies()).find((cookie) => cookie.name === 'lk_device')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });

    // Same browser, after signing out: the link alone is enough now, and the login reports only the link.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(`${base}/`, { timeout: 10_000 });
    await signInByLink(page, 'carol@globex.test');
    await page.waitForURL(`${base}/`, { timeout: 15_000 });
    expect(await claimsOf(page)).toMatchObject({ amr: ['otp'], acr: 'urn:latchkey:acr:1fa' });

    // A fresh browser is asked for the second step.
    const fresh = await browser.newContext();
    const freshPage = await fresh.newPage();
    await signInByLink(freshPage, 'carol@globex.test');
    await freshPage.waitForURL(`${base}/login/factors`);
    await fresh.close();

    // A step-up (an application asks for the two-factor acr): the remembered browser counts for nothing.
    const stepUp = new URLSearchParams({
      client_id: 'latchkey-demo',
      response_type: 'code',
      redirect_uri: `${base}/callback`,
      scope: 'openid',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
      state: 'step-up',
      acr_values: 'urn:latchkey:acr:2fa',
    });
    await page.goto(`${base}/oidc/auth?${stepUp}`);
    await page.waitForURL(`${base}/login/factors`);
    expect(await page.locator('main').textContent()).toContain('The application asks for a stronger sign-in.');
    expect(await page.locator('#still-needed li').allTextContents()).toEqual([
      'a code from your authenticator app',
      'your password',
      'a recovery code',
      'a passkey',
    ]);
    // carol has no password: a step-up offers no way to set one on the way (it would make the stronger sign-in moot).
    expect(await page.locator('main').textContent()).toContain('No password is set for this account.');
    expect(await page.locator('form[action="/login/password/setup"]').count()).toBe(0);
    await context.close();
  });

  it("spec Multi-factor rules 2: after a factor's validity passes, a protected page asks for it again, and only for it", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const outbox = outboxOf(service.config.dataDir);
    await page.goto(`${base}/account`);
    await page.waitForURL(`${base}/login`);
    await page.getByLabel('E-mail address').fill('erin@acme.test');
    let before = outbox.count();
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    await page.waitForURL(/\/login\/ott\?sent=1/);
    await page.goto((await outbox.next(before, 'erin@acme.test')).magicLink);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${base}/account`);
    // Two minutes pass (the factors behind the session are dated back rather than waited for).
    await service.database.db.execute(
      sql`update provider_session_factors set factors = (select jsonb_agg(jsonb_set(grant_, '{issuedAt}', to_jsonb((grant_->>'issuedAt')::bigint - 120))) from jsonb_array_elements(factors) as grant_)`,
    );
    await page.goto(`${base}/account`);
    await page.waitForURL(`${base}/login/factors`);
    expect(await page.locator('#still-needed li').allTextContents()).toEqual(['a sign-in link or code by e-mail', 'a passkey']);
    before = outbox.count();
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    await page.goto((await outbox.next(before, 'erin@acme.test')).magicLink);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${base}/account`);
    expect(await page.locator('main').textContent()).toContain('Signed in as erin@acme.test');
    await context.close();
  });

  it('a member the rule does not apply to signs in with the link alone (amr ["otp"], one-factor acr)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signInByLink(page, 'bob@acme.test');
    await page.waitForURL(`${base}/`, { timeout: 15_000 });
    expect(await claimsOf(page)).toMatchObject({ amr: ['otp'], acr: 'urn:latchkey:acr:1fa' });
    await context.close();
  });
});
