import { createHash } from 'node:crypto';
import { RemovePasskeyDocument } from '@latchkey/client';
import { passkeys, seedDemoData } from '@latchkey/db';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from './support/chromium.js';
import { demoOf } from './support/demo.js';
import { startLocalhostService, type TestService } from './support/service.js';
import { startSmtpSink } from './support/smtp-sink.js';
import { CHALLENGE_FRESH } from './support/step-up-suite.js';

// spec Multi-factor rules 6 / RFC 9470. The demo client in Chromium answers a step-up challenge: a new authorization request, then one retry.

describe.runIf(hasChromium)(
  'spec Multi-factor rules 6 / RFC 9470 in Chromium: the demo client answers a step-up challenge and retries once',
  () => {
    let local: TestService;
    let browser: Browser;
    let base: string;
    let sink: Awaited<ReturnType<typeof startSmtpSink>>;

    beforeAll(async () => {
      sink = await startSmtpSink();
      ({ service: local, base } = await startLocalhostService({
        NODE_ENV: 'development',
        SMTP_URL: sink.url,
        MAIL_FROM: 'login@latchkey.test',
      }));
      await seedDemoData(local.database);
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
      await local?.stop();
      await sink?.close();
    });

    it('removePasskey answered with the challenge: a new authorization request with max_age, then the removal is retried and done', async () => {
      const alice = (await demoOf(local)).userId.alice;
      await local.database.db.insert(passkeys).values({
        id: 'alice-key-1',
        userId: alice,
        label: 'Laptop',
        userHandle: `handle-${alice}`,
        publicKey: new Uint8Array([1, 2, 3]),
        counter: 1,
        transports: ['internal'],
        deviceType: 'singleDevice',
        backedUp: false,
        aaguid: '00000000-0000-0000-0000-000000000000',
        rpId: 'localhost',
      });
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${base}/`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/interaction\//);
      await page.getByLabel('E-mail address').fill('alice@acme.test');
      await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
      await page.waitForURL(/\/login\/ott\?sent=1/);
      await page.goto(await sink.nextLink(0));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${base}/`);
      await expect.poll(() => page.getByLabel('Passkey name').inputValue(), { timeout: 10_000 }).toBe('Laptop');

      // The sign-in is seconds old, so the API would let the removal through: the first answer is replaced by the
      // challenge a sign-in older than 5 minutes gets, exactly as the API words it.
      const removals: string[] = [];
      // The demo sends its operations by hash (registered at start in development): the removal is the POST naming
      // RemovePasskey's hash (or, were it not registered, its text).
      const removalHash = createHash('sha256').update(RemovePasskeyDocument.toString()).digest('hex');
      await page.route(`${base}/graphql`, async (route) => {
        const body = route.request().postData() ?? '';
        if (!body.includes(removalHash) && !body.includes('removePasskey')) return route.continue();
        removals.push(body);
        if (removals.length > 1) return route.continue();
        return route.fulfill({
          status: 401,
          headers: { 'content-type': 'application/graphql-response+json; charset=utf-8', 'www-authenticate': CHALLENGE_FRESH },
          body: JSON.stringify({
            data: { removePasskey: null },
            errors: [
              {
                message: 'More recent authentication is required.',
                path: ['removePasskey'],
                extensions: { code: 'INSUFFICIENT_USER_AUTHENTICATION', max_age: 300 },
              },
            ],
          }),
        });
      });
      const authorization = page.waitForRequest((request) => request.url().startsWith(`${base}/oidc/auth?`));
      await page.getByRole('button', { name: 'Remove' }).click();
      const asked = new URL((await authorization).url()).searchParams;
      expect(asked.get('max_age')).toBe('300');
      expect(asked.get('code_challenge_method')).toBe('S256');
      expect(asked.has('acr_values')).toBe(false);

      // The provider session is fresh enough: straight back to the callback, then the remembered removal, once.
      await page.waitForURL(`${base}/`, { timeout: 15_000 });
      await expect.poll(() => page.locator('#passkey-status').textContent(), { timeout: 10_000 }).toBe('Passkey removed.');
      expect(removals).toHaveLength(2);
      expect(JSON.parse(removals[1]!)).toEqual(JSON.parse(removals[0]!));
      expect(await local.database.db.select({ id: passkeys.id }).from(passkeys)).toEqual([]);
      // Nothing of the step-up's sign-in (its verifier, the remembered removal) is left in the browser.
      expect(await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('demo.sign-in.')))).toEqual([]);
      await context.close();
    });
  },
);
