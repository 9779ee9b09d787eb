import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { persistedOperations, seedDemoData } from '@latchkey/db';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPlatformAuthenticator, graphqlFromDemoPage, hasChromium, launchChromium } from './support/chromium.js';
import { COST_REPORTED } from './support/cost.js';
import { postGraphQL, startLocalhostService, type TestService } from './support/service.js';
import { startSmtpSink } from './support/smtp-sink.js';

const ARTIFACTS = fileURLToPath(new URL('../test-results/', import.meta.url));

describe.runIf(hasChromium)('end to end in Chromium: the demo client signs in with a magic link, then with a passkey', () => {
  let service: TestService;
  let browser: Browser;
  let base: string;
  let sink: Awaited<ReturnType<typeof startSmtpSink>>;

  beforeAll(async () => {
    // Real mail: the service sends through SMTP to a sink on loopback; the test reads the link from there.
    sink = await startSmtpSink();
    // The RP ID and cookies want a host name: the page is opened at localhost, the server listens on 127.0.0.1.
    ({ service, base } = await startLocalhostService({ NODE_ENV: 'development', SMTP_URL: sink.url, MAIL_FROM: 'login@latchkey.test' }));
    await seedDemoData(service.database);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await sink?.close();
  });

  it('request a link for alice, follow it, land signed in with her documents (amr otp); add a passkey, sign out, sign in with the passkey alone (amr swk)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // A platform authenticator for this page (CDP virtual authenticator; user verification succeeds).
    await addPlatformAuthenticator(context, page);
    await page.goto(`${base}/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/interaction\//);
    await page.getByLabel('E-mail address').fill('alice@acme.test');
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    await page.waitForURL(/\/login\/ott\?sent=1/);
    const link = await sink.nextLink(0);
    expect(sink.inbox.map((mail) => mail.to)).toEqual([['alice@acme.test']]);

    // Following the link in the same browser: the page fills the field, the user confirms.
    await page.goto(link);
    await expect.poll(() => page.url()).not.toContain('token=');
    expect(await page.getByLabel('The 6-digit code from the message (or the token of its link)').inputValue()).toBe(
      new URL(link).searchParams.get('token'),
    );
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/`);
    await expect.poll(() => page.locator('#who').textContent(), { timeout: 10_000 }).toBe('alice@acme.test');
    await expect.poll(() => page.locator('#documents li').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    const claims = JSON.parse((await page.locator('#claims').textContent())!) as { amr: string[]; acr: string };
    expect(claims).toMatchObject({ amr: ['otp'], acr: 'urn:latchkey:acr:1fa' });
    expect(await page.locator('#documents').textContent()).toContain('Quarterly plan');
    // The demo talks through packages/client, by hash: in development its operations are registered at start (so its
    // first visit finds them, with no PersistedQueryNotFound in the console), one APQ registration per operation.
    const manifestIds = Object.keys(
      JSON.parse(readFileSync(createRequire(import.meta.url).resolve('@latchkey/client/persisted-documents.json'), 'utf8')) as object,
    );
    const registered = () => service.database.db.select({ hash: persistedOperations.hash }).from(persistedOperations);
    expect((await registered()).length).toBe(manifestIds.length);

    // The tab's access token is bound to the browser's key (DPoP): it works from the page, with a proof, and pasted
    // into curl as a bearer token (README's tour) it is refused.
    const tokens = JSON.parse((await page.evaluate(() => sessionStorage.getItem('demo.tokens')))!) as { access_token: string };
    expect(await page.locator('#access-token').textContent()).toBe(tokens.access_token);
    expect((await graphqlFromDemoPage(page, '{ me { email } }')).json).toEqual({
      data: { me: { email: 'alice@acme.test' } },
      extensions: COST_REPORTED,
    });
    const stolen = await postGraphQL(`${base}/graphql`, { query: '{ me { email } }' }, { token: tokens.access_token });
    expect(stolen.status).toBe(401);
    expect(stolen.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);
    // curl's own Accept (*/*) is answered as application/json: 200, the same challenge and error.
    const curl = await postGraphQL(`${base}/graphql`, { query: '{ me { email } }' }, { token: tokens.access_token, accept: '*/*' });
    expect(curl.status).toBe(200);
    expect(curl.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);
    expect(curl.json).toEqual({
      errors: [{ message: 'The access token is invalid or expired.', extensions: { code: 'UNAUTHENTICATED' } }],
      extensions: COST_REPORTED,
    });
    expect(stolen.json).toEqual(curl.json);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'demo-client-signed-in.png'), fullPage: true });

    // Register a passkey while signed in.
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await expect.poll(() => page.locator('#passkey-status').textContent(), { timeout: 10_000 }).toBe('Passkey added.');
    // Manage it: the list shows it by name; rename it.
    await expect.poll(() => page.getByLabel('Passkey name').inputValue(), { timeout: 10_000 }).toBe('Demo passkey');
    await page.getByLabel('Passkey name').fill('Alice laptop');
    await page.getByRole('button', { name: 'Rename' }).click();
    await expect.poll(() => page.locator('#passkey-status').textContent(), { timeout: 10_000 }).toBe('Passkey renamed.');
    await expect.poll(() => page.getByLabel('Passkey name').inputValue()).toBe('Alice laptop');

    // Sign out ends the provider session and returns to the signed-out page.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForLoadState('networkidle');
    const confirm = page.getByRole('button', { name: /yes|sign out/i });
    if (await confirm.count()) await confirm.first().click();
    await page.waitForURL(`${base}/`, { timeout: 10_000 });
    await expect.poll(() => page.locator('#signed-out').isVisible()).toBe(true);

    // Sign in again with the passkey alone: no username typed (a discoverable credential).
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/interaction\//);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${base}/`, { timeout: 15_000 });
    await expect.poll(() => page.locator('#who').textContent(), { timeout: 10_000 }).toBe('alice@acme.test');
    const passkeyClaims = JSON.parse((await page.locator('#claims').textContent())!) as { amr: string[]; acr: string };
    expect(passkeyClaims).toMatchObject({ amr: ['swk'], acr: 'urn:latchkey:acr:phr' });
    const viaPasskey = await graphqlFromDemoPage(page, '{ me { email } viewer { amr } }');
    expect(viaPasskey.json).toEqual({ data: { me: { email: 'alice@acme.test' }, viewer: { amr: ['swk'] } }, extensions: COST_REPORTED });

    // Removing the passkey: it can no longer sign in.
    await page.getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => page.locator('#passkey-status').textContent(), { timeout: 10_000 }).toBe('Passkey removed.');
    await expect.poll(() => page.locator('#passkeys li').count()).toBe(0);
    await context.close();
  });
});
