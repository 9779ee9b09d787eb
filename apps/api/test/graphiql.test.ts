import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from './support/chromium.js';
import { startLocalhostService, type TestService } from './support/service.js';

// GraphiQL is served from the installed packages, under a content security policy that allows
// no other origin, and works in a browser that can reach nothing but the server.

describe('GraphiQL from the installed packages (development)', () => {
  let service: TestService;
  let base: string;
  beforeAll(async () => {
    ({ service, base } = await startLocalhostService({ NODE_ENV: 'development' }));
  });
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const step of cleanup.splice(0)) await step();
    await service?.stop();
  });

  it('the page carries everything itself and a policy that names no other origin', async () => {
    const page = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(policy).not.toMatch(/https?:|\*|'unsafe-eval'/);
    const html = await page.text();
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)="https?:/);
  });

  describe.runIf(hasChromium)('in Chromium with every other origin blocked', () => {
    it('loads, reports no policy violation, and runs a query', async () => {
      const browser = await launchChromium();
      cleanup.push(() => browser.close());
      const context = await browser.newContext();
      const page = await context.newPage();
      const elsewhere: string[] = [];
      await context.route('**/*', (route) => {
        const url = new URL(route.request().url());
        if (url.origin === base) return route.continue();
        elsewhere.push(url.href);
        return route.abort('internetdisconnected');
      });
      const violations: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' && /Content Security Policy|Refused to/.test(message.text())) violations.push(message.text());
      });
      await page.goto(`${base}/graphql`);
      // The editor is up: the run button is there and the query editor shows Yoga's default query.
      const run = page.locator('.graphiql-execute-button');
      await run.waitFor({ timeout: 30_000 });
      await page.waitForFunction(() => document.querySelectorAll('.graphiql-query-editor .view-line').length > 0, undefined, {
        timeout: 30_000,
      });
      // Replace the query: select all in the editor and type ours.
      await page.locator('.graphiql-query-editor .view-lines').first().click();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.press('Delete');
      await page.keyboard.type('{ status { service version } }');
      await run.click();
      await expect.poll(async () => page.locator('.graphiql-response').textContent(), { timeout: 30_000 }).toContain('"service"');
      const response = await page.locator('.graphiql-response').textContent();
      expect(response).toContain('"status"');
      expect(elsewhere).toEqual([]);
      expect(violations).toEqual([]);
      await context.close();
    }, 90_000);
  });
});
