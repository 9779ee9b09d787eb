import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testTempDir } from '@latchkey/db/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from './support/chromium.js';
import { type RelyingPartyServer, startRelyingParty } from './support/relying-party.js';
import { startLocalhostService, type TestService } from './support/service.js';

// Fair use as a browser client on another origin meets it (docs/graphql.md, "Budgets"): the figures are read by
// the page's own script, so CORS must expose the RateLimit fields and Retry-After, and the answers must be readable.

/** What the page's script read off each answer. */
interface Read {
  status: number;
  policy: string | null;
  rateLimit: string | null;
  retryAfter: string | null;
  code?: string;
  cost?: { requestedQueryCost: number; actualQueryCost: number | null; throttleStatus: Record<string, number> };
}

/** A page that spends a guest's budget on `{ __typename }` until refused, and prints what it could read. */
const spendingPage = (graphql: string) => `<!doctype html><title>Spending</title><pre id="out"></pre>
<script type="module">
  const read = [];
  const send = async () => {
    const answer = await fetch(${JSON.stringify(graphql)}, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    const body = await answer.json();
    read.push({
      status: answer.status,
      policy: answer.headers.get('RateLimit-Policy'),
      rateLimit: answer.headers.get('RateLimit'),
      retryAfter: answer.headers.get('Retry-After'),
      code: body.errors?.[0]?.extensions?.code,
      cost: body.extensions?.cost,
    });
    return read.at(-1);
  };
  let last;
  for (let attempt = 0; attempt < 200 && last?.status !== 429; attempt++) last = await send();
  // As a client told to wait does: once, after Retry-After.
  await new Promise((resolve) => setTimeout(resolve, Number(last.retryAfter) * 1000));
  await send();
  document.getElementById('out').textContent = JSON.stringify(read);
</script>`;

describe.runIf(hasChromium)('a browser app on another origin reads its budget (Chromium)', () => {
  let service: TestService;
  let base: string;
  let app: RelyingPartyServer;
  let browser: Browser;

  beforeAll(async () => {
    app = await startRelyingParty();
    const file = join(testTempDir(), 'budgets-browser.json');
    // A guest holds 5 points, refilled one a second: refused within a few answers, told to wait a second or more.
    const sizes = { capacity: 5, restorePerSecond: 1 };
    writeFileSync(file, JSON.stringify({ guest: sizes, plans: { FREE: sizes, PRO: sizes } }));
    ({ service, base } = await startLocalhostService({ API_BUDGET_FILE: file, CORS_ORIGINS: app.origin }));
    app.servePage('/spend', spendingPage(`${base}/graphql`));
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await app?.close();
  });

  it("the page's script reads RateLimit, RateLimit-Policy, extensions.cost and, once refused, 429 with a Retry-After after which it is admitted", async () => {
    const page = await browser.newPage();
    await page.goto(`${app.origin}/spend`);
    await expect.poll(() => page.locator('#out').textContent(), { timeout: 20_000 }).not.toBe('');
    const read = JSON.parse((await page.locator('#out').textContent())!) as Read[];

    const [first] = read;
    expect(first).toMatchObject({ status: 200, policy: '"api-budget";q=5;w=5', retryAfter: null });
    expect(first?.cost).toMatchObject({
      requestedQueryCost: 1,
      actualQueryCost: 1,
      throttleStatus: { maximumAvailable: 5, restoreRate: 1 },
    });
    // The header and the body report the same level: the one the answer left.
    const remaining = Number(/^"api-budget";r=(\d+);t=\d+$/.exec(first?.rateLimit ?? '')?.[1]);
    expect(remaining).toBe(first?.cost?.throttleStatus['currentlyAvailable']);

    const refused = read.at(-2)!;
    expect(refused.status).toBe(429);
    expect(refused.code).toBe('RATE_LIMITED');
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(refused.rateLimit).toMatch(/^"api-budget";r=0;t=\d+$/);
    expect(refused.cost?.actualQueryCost).toBe(1);
    // Retry-After is true: it counts the refusal's own charge too, so the client waiting that long is admitted.
    expect(read.at(-1)).toMatchObject({ status: 200, retryAfter: null });
    await page.close();
  });
});
