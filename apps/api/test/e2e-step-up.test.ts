import { seedDemoData } from '@latchkey/db';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPlatformAuthenticator, demoSignInByLink, graphqlFromDemoPage, hasChromium, launchChromium } from './support/chromium.js';
import { COST_REPORTED } from './support/cost.js';
import { outboxOf } from './support/outbox.js';
import { startLocalhostService, type TestService } from './support/service.js';

describe.runIf(hasChromium)('end to end in Chromium: step-up (spec Multi-factor rules 6, RFC 9470)', () => {
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

  it('legal hold wants a phishing-resistant sign-in: a link-only token gets the challenge, the demo client re-authenticates with the passkey and the retried operation succeeds', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await addPlatformAuthenticator(context, page);
    await demoSignInByLink(page, base, outboxOf(service.config.dataDir), 'alice@acme.test');
    await page.waitForURL(`${base}/`);
    await expect.poll(() => page.locator('#claims').textContent(), { timeout: 10_000 }).toContain('"urn:latchkey:acr:1fa"');

    // The API refuses the link-only token with the RFC 9470 challenge (not FORBIDDEN).
    const documents = await graphqlFromDemoPage(page, '{ documents(first: 50) { edges { node { id title legalHold } } } }');
    const target = (
      documents.json as { data: { documents: { edges: { node: { id: string; title: string; legalHold: boolean } }[] } } }
    ).data.documents.edges
      .map((edge) => edge.node)
      .find((node) => !node.legalHold)!;
    const challenged = await graphqlFromDemoPage(
      page,
      'mutation ($id: ID!) { setLegalHold(id: $id, legalHold: true) { userErrors { code } } }',
      { id: target.id },
    );
    expect(challenged.status).toBe(401);
    expect(challenged.challenge).toContain('acr_values="urn:latchkey:acr:phr"');

    // A passkey, added while the sign-in is fresh.
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await expect.poll(() => page.locator('#passkey-status').textContent(), { timeout: 10_000 }).toBe('Passkey added.');

    // The demo client meets the challenge: a new authorization request with acr_values; the provider asks only for
    // what is missing (the passkey), and the operation is retried once.
    await page.getByRole('button', { name: `Put legal hold on ${target.title}` }).click();
    await page.waitForURL(`${base}/login/factors`);
    expect(await page.locator('main').textContent()).toContain('The application asks for a stronger sign-in.');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${base}/`, { timeout: 15_000 });
    await expect.poll(() => page.locator('#documents-status').textContent(), { timeout: 10_000 }).toBe('Legal hold set.');
    const claims = JSON.parse((await page.locator('#claims').textContent())!) as { amr: string[]; acr: string };
    expect(claims).toMatchObject({ amr: ['otp', 'swk', 'mfa'], acr: 'urn:latchkey:acr:phr' });
    const after = await graphqlFromDemoPage(page, 'query ($id: ID!) { document(id: $id) { legalHold } }', { id: target.id });
    expect(after.json).toEqual({ data: { document: { legalHold: true } }, extensions: COST_REPORTED });
    await context.close();
  });
});
