import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConsoleMessage, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium, useChromiumService } from './support/chromium.js';
import { outboxOf } from './support/outbox.js';

// README's tour in Chromium as a newcomer meets it, in development as `pnpm start` runs: the first visit logs nothing
// in the console, the sign-in link opened in another tab of the same browser (as a mail client opens it) completes the
// sign-in there, and the list says why each document is shown to whom.

const ARTIFACTS = fileURLToPath(new URL('../test-results/', import.meta.url));

/** What the browser's console says: errors, uncaught exceptions and failed responses, from now on. */
function consoleTroubles(page: Page): string[] {
  const troubles: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error' || message.type() === 'warning') troubles.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => troubles.push(`uncaught: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400) troubles.push(`${response.status()} ${response.url()}`);
  });
  return troubles;
}

describe.runIf(hasChromium)('end to end in Chromium: the tour without surprises', () => {
  const started = useChromiumService({ NODE_ENV: 'development' });

  it('first visit: no console error, the stylesheet applies under the page CSP; a link opened in another tab signs in there; the list says who sees each document', async () => {
    const { base, browser, service } = started;
    const context = await browser.newContext();
    const first = await context.newPage();
    const firstTroubles = consoleTroubles(first);
    await first.goto(`${base}/`);
    await first.getByRole('button', { name: 'Sign in' }).waitFor();
    // The page's own stylesheet, allowed by its CSP (style-src 'self'), not bypassed.
    await expect.poll(() => first.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(246, 247, 249)');
    expect(firstTroubles).toEqual([]);

    // Sign in: the provider's page asks for a link, which arrives by mail and is opened in a new tab.
    await first.getByRole('button', { name: 'Sign in' }).click();
    await first.waitForURL(/\/interaction\//);
    await first.getByLabel('E-mail address').fill('alice@acme.test');
    const outbox = outboxOf(service.config.dataDir);
    const before = outbox.count();
    await first.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    await first.waitForURL(/\/login\/ott\?sent=1/);
    const link = (await outbox.next(before, 'alice@acme.test')).magicLink;
    const second = await context.newPage();
    await second.goto(link);
    await second.getByRole('button', { name: 'Sign in', exact: true }).click();
    await second.waitForURL(`${base}/`);
    const secondTroubles = consoleTroubles(second);
    await expect.poll(() => second.locator('#who').textContent(), { timeout: 10_000 }).toBe('alice@acme.test');
    expect(await second.locator('#error').textContent()).toBe('');
    // No sign-in is left half done in the browser's storage.
    expect(await second.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('demo.sign-in.')))).toEqual([]);

    // Alice (an owner) sees every acme document; each says who else does, and why.
    const item = (title: string) => second.locator('#documents li', { hasText: title });
    await expect.poll(() => item('Launch announcement').count(), { timeout: 10_000 }).toBe(1);
    expect(await item('Launch announcement').textContent()).toContain(
      'Hidden from the viewers of acme until 2099-01-01 (embargo): editors and above see it now.',
    );
    expect(await item('Draft roadmap').textContent()).toContain('Hidden from the viewers of acme (a draft): editors and above see it.');
    expect(await item('Old pricing').textContent()).toContain('Hidden from the viewers of acme (archived): editors and above see it.');
    expect(await item('Litigation memo').textContent()).toContain('Under legal hold: nobody can delete it, not even an owner.');
    expect(await item('Quarterly plan').textContent()).toContain('Every member of acme sees it.');
    expect(secondTroubles).toEqual([]);
    mkdirSync(ARTIFACTS, { recursive: true });
    await second.screenshot({ path: path.join(ARTIFACTS, 'demo-tour-signed-in.png'), fullPage: true });
    await context.close();
  });
});
