import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedDemoData } from '@latchkey/db';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPlatformAuthenticator, hasChromium, launchChromium } from './support/chromium.js';
import { outboxOf } from './support/outbox.js';
import { startLocalhostService, type TestService } from './support/service.js';

const ARTIFACTS = fileURLToPath(new URL('../test-results/', import.meta.url));

describe.runIf(hasChromium)("end to end in Chromium: the provider's account page manages passkeys on the provider session", () => {
  let service: TestService;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    ({ service, base } = await startLocalhostService({ NODE_ENV: 'development' }));
    await seedDemoData(service.database);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('sign in on /login with a link, add a passkey on /account, rename it, sign out, sign in with the passkey alone, remove it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const { cdp, authenticatorId } = await addPlatformAuthenticator(context, page);
    const outbox = outboxOf(service.config.dataDir);

    // Default deny: the account page sends a browser without a session to sign in.
    await page.goto(`${base}/account`);
    await page.waitForURL(`${base}/login`);
    await page.getByLabel('E-mail address').fill('alice@acme.test');
    const before = outbox.count();
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    await page.waitForURL(/\/login\/ott\?sent=1/);
    await page.goto((await outbox.next(before)).magicLink);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${base}/account`);
    expect(await page.locator('main').textContent()).toContain('Signed in as alice@acme.test with a sign-in link or code by e-mail');
    // Her own recent sign-ins, from the audit trail (written in the background: a reload shows it).
    await expect
      .poll(
        async () => {
          await page.reload();
          return page.locator('#sign-in-history').textContent();
        },
        { timeout: 10_000 },
      )
      .toContain('HeadlessChrome');
    expect(await page.locator('#sign-in-history tbody tr').first().textContent()).toMatch(/sign-in link or code by e-mail.*signed in/i);
    expect(await page.locator('main').textContent()).toContain('You have no passkeys yet.');

    // Add a passkey with the virtual authenticator; the provider session is the credential.
    await page.getByLabel('Name for a new passkey (optional)').fill('Work laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(`${base}/account?done=added`);
    expect(await page.getByRole('status').textContent()).toBe('The passkey was added.');
    expect(await page.locator('#passkeys li strong').allTextContents()).toEqual(['Work laptop']);
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1);

    await page.getByLabel('New name').fill('Laptop');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.waitForURL(`${base}/account?done=renamed`);
    expect(await page.locator('#passkeys li strong').allTextContents()).toEqual(['Laptop']);

    // Sign out through the provider's confirmation page.
    await page.getByRole('link', { name: 'Sign out of Latchkey in this browser' }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await expect.poll(() => page.locator('main').textContent()).toContain('You are signed out of Latchkey in this browser.');
    await page.goto(`${base}/account`);
    await page.waitForURL(`${base}/login`);

    // Discoverable credential: no username typed.
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${base}/account`);
    expect(await page.locator('main').textContent()).toContain('Signed in as alice@acme.test with a passkey');
    expect(await page.locator('#passkeys li small').textContent()).toContain('last used');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'account-page-passkey.png'), fullPage: true });

    await page.getByRole('button', { name: 'Remove “Laptop”' }).click();
    await page.waitForURL(`${base}/account?done=removed`);
    expect(await page.locator('main').textContent()).toContain('You have no passkeys yet.');
    // The credential is still on the authenticator but signs nobody in any more.
    await page.goto(`${base}/login`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await expect.poll(() => page.locator('#passkey-error').textContent(), { timeout: 10_000 }).toBe('The passkey could not be verified.');
    await context.close();
  });
});
