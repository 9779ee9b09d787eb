import { onPostgres } from '@latchkey/db/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSignInByLink, hasChromium, launchChromium, signInOnProviderPage } from './support/chromium.js';
import { outboxOf } from './support/outbox.js';
import { startServiceProcesses, type ServiceProcesses } from './support/processes.js';

describe.runIf(onPostgres('the PostgreSQL-only tests') && hasChromium)(
  'end to end in Chromium: a session ended in one browser, on a second instance',
  () => {
    let processes: ServiceProcesses;
    let browser: Browser;
    let base: string;
    let second: string;

    beforeAll(async () => {
      // Two processes of one service. Pages load from the first (PUBLIC_URL); the demo page's API calls go to the second.
      processes = await startServiceProcesses(2, (_url, _index, publicUrl) => ({ NODE_ENV: 'development', CORS_ORIGINS: publicUrl }), {
        publicUrlOnFirst: true,
      });
      base = processes.publicUrl;
      second = `${processes.urls[1]}/graphql`;
      browser = await launchChromium();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await processes?.stop();
    });

    it("ending the laptop's session on the desk's account page stops the laptop's API calls and ends its subscription on the other instance from its next read of the ended list, with no event", async () => {
      const outbox = outboxOf(processes.dataDir);
      // The demo page's CSP keeps its own scripts to its origin; the test's script in it calls the second instance.
      const laptop = await (await browser.newContext({ userAgent: 'Laptop Chromium', bypassCSP: true })).newPage();
      await demoSignInByLink(laptop, base, outbox, 'alice@acme.test');
      await laptop.waitForURL(`${base}/`);
      await expect.poll(() => laptop.evaluate(() => sessionStorage.getItem('demo.tokens')), { timeout: 10_000 }).not.toBeNull();

      // In the laptop's page: an API call to the second instance, and a subscription there over SSE that records what
      // it hears. The tab's token is bound to the browser's key (DPoP): each request carries a proof signed in the page
      // for PUBLIC_URL's /graphql (htu names the service, whichever instance answers). Strings, not functions: the test
      // runner rewrites `import()` in the functions it compiles.
      const inPage = (body: string) => `(async (url) => {
        const { createDpopSigner } = await import('/client/index.js');
        const dpop = await createDpopSigner({ name: 'latchkey-demo' });
        const { access_token } = JSON.parse(sessionStorage.getItem('demo.tokens'));
        const headers = async (accept) => ({
          'content-type': 'application/json',
          accept,
          authorization: 'DPoP ' + access_token,
          dpop: await dpop.proof('POST', location.origin + '/graphql', access_token),
        });
        ${body}
      })(${JSON.stringify(second)})`;
      const callSecond = () =>
        laptop.evaluate<number>(
          inPage(`const response = await fetch(url, { method: 'POST', headers: await headers('application/graphql-response+json'),
            body: JSON.stringify({ query: '{ viewer { subject } }' }) });
          return response.status;`),
        );
      expect(await callSecond()).toBe(200);
      await laptop.evaluate(
        inPage(`const heard = [];
        window.heard = heard;
        const response = await fetch(url, { method: 'POST', headers: await headers('text/event-stream'),
          body: JSON.stringify({ query: 'subscription { documentChanged(organization: "acme") { kind } }' }) });
        void (async () => {
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return heard.push('closed');
            for (const line of value.split('\\n')) if (line.startsWith('data:') && line.length > 6) heard.push(line.slice(5).trim());
          }
        })();`),
      );

      const desk = await (await browser.newContext({ userAgent: 'Desk Chromium' })).newPage();
      await signInOnProviderPage(desk, base, outbox, 'alice@acme.test');
      const laptopRow = desk.locator('#sessions li', { hasText: 'Laptop Chromium' });
      expect(await laptopRow.textContent()).toContain('used through latchkey-demo');
      expect(await desk.locator('#sessions li', { hasText: 'Desk Chromium' }).textContent()).toContain('this browser');

      await laptopRow.getByRole('button', { name: 'End this session' }).click();
      await desk.waitForURL(`${base}/account?done=session-ended`);
      expect(await desk.locator('#sessions li', { hasText: 'Laptop Chromium' }).count()).toBe(0);

      // "Within 5 s" is the other instance's reading interval of the ended list (a second), proved with an injected
      // clock on the list itself (packages/auth ended-sessions.test.ts): here the refusals are the events waited
      // for, with deadlines far above any real latency.
      await expect.poll(callSecond, { timeout: 20_000, interval: 100 }).toBe(401);
      await expect
        .poll(() => laptop.evaluate(() => (window as unknown as { heard: string[] }).heard.join('\n')), { timeout: 20_000, interval: 100 })
        .toContain('UNAUTHENTICATED');
      const heard = await laptop.evaluate(() => (window as unknown as { heard: string[] }).heard);
      // no event was delivered: only the last error (a delivered event carries its kind)
      expect(heard.filter((line) => line.includes('"kind"'))).toEqual([]);
    }, 90_000);
  },
);
