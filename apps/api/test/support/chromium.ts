import { existsSync } from 'node:fs';
import { runsHere } from '@latchkey/db/testing';
import { CHROMIUM } from '@latchkey/auth/testing';
import { seedDemoData } from '@latchkey/db';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { startLocalhostService, type TestService } from './service.js';
import { codeOf, type outboxOf } from './outbox.js';

import { launchChromium } from '@latchkey/auth/testing';

export { launchChromium };

export const hasChromium = runsHere(
  'the browser tests (passkeys, the demo, GraphiQL)',
  existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (apt-get install chromium)`,
);

/**
 * A platform authenticator for a page (CDP virtual authenticator: CTAP2, internal transport, resident keys,
 * user verification that succeeds), as a laptop's built-in passkey provider behaves.
 */
export async function addPlatformAuthenticator(context: BrowserContext, page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

/** The demo client's sign-in as far as the e-mail link: returns once the link's page has been submitted. */
export async function demoSignInByLink(page: Page, base: string, outbox: ReturnType<typeof outboxOf>, email: string): Promise<void> {
  await page.goto(`${base}/`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/interaction\//);
  await followEmailedLink(page, outbox, email);
}

/** How a person completes the provider's sign-in: the 6-digit code typed on the page, or the e-mailed link opened. */
export type SignInBy = 'code' | 'link';

/**
 * At the provider's sign-in page (where an authorization request has brought `page`): asks for a message for
 * `email`, then types its code or opens its link in the same tab, and presses *Sign in*. Returns once the browser has
 * left the provider's pages (the chain of redirects after the form ends at the client, or is stopped there).
 */
export async function signInAtProvider(page: Page, outbox: ReturnType<typeof outboxOf>, email: string, by: SignInBy): Promise<void> {
  await page.getByLabel('E-mail address').fill(email);
  const before = outbox.count();
  await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
  await page.waitForURL(/\/login\/ott\?sent=1/);
  const message = await outbox.next(before, email);
  if (by === 'link') await page.goto(message.magicLink);
  const field = page.getByLabel('The 6-digit code from the message (or the token of its link)');
  if (by === 'code') await field.fill(codeOf(message));
  else await expect.poll(() => field.inputValue()).not.toBe('');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** On a sign-in page: asks for a link for `email`, opens the link from the outbox and confirms it. */
const followEmailedLink = (page: Page, outbox: ReturnType<typeof outboxOf>, email: string) => signInAtProvider(page, outbox, email, 'link');

/** What the page's GraphQL call answered. */
export interface PageAnswer {
  status: number;
  json: any;
  challenge: string | null;
}

/**
 * POST /graphql from the demo page itself, as its client does: the tab's DPoP-bound access token with a proof signed
 * by the browser's key (the typed client's signer, the key from IndexedDB). Only the page can: the key never leaves it.
 */
export function graphqlFromDemoPage(page: Page, query: string, variables?: Record<string, unknown>): Promise<PageAnswer> {
  // A string, not a function: the test runner rewrites `import()` in the functions it compiles.
  return page.evaluate(`(async ({ query, variables }) => {
    const { createDpopSigner } = await import('/client/index.js');
    const dpop = await createDpopSigner({ name: 'latchkey-demo' });
    const { access_token } = JSON.parse(sessionStorage.getItem('demo.tokens'));
    const response = await fetch('/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        authorization: 'DPoP ' + access_token,
        dpop: await dpop.proof('POST', '/graphql', access_token),
      },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, json: await response.json(), challenge: response.headers.get('www-authenticate') };
  })(${JSON.stringify({ query, variables })})`);
}

/**
 * A seeded localhost service with `env` and a Chromium for the tests of the calling describe block (started before
 * them, closed after). Its fields are set once they have started.
 */
export function useChromiumService(env: Record<string, string>): { service: TestService; base: string; browser: Browser } {
  const started = {} as { service: TestService; base: string; browser: Browser };
  beforeAll(async () => {
    ({ service: started.service, base: started.base } = await startLocalhostService(env));
    await seedDemoData(started.service.database);
    started.browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await started.browser?.close();
    await started.service?.stop();
  });
  return started;
}

/** Signs `email` in on the provider's own sign-in page (no application waiting) with the e-mailed link; ends on /account. */
export async function signInOnProviderPage(page: Page, base: string, outbox: ReturnType<typeof outboxOf>, email: string): Promise<void> {
  await page.goto(`${base}/login`);
  await followEmailedLink(page, outbox, email);
  await page.waitForURL(`${base}/account`);
}
