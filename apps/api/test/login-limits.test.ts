import { seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { startLocalhostService, type TestService } from './support/service.js';

// A service of its own: these tests use up the rate limits of 127.0.0.1.
let service: TestService;
let base: string;

beforeAll(async () => {
  ({ service, base } = await startLocalhostService({ NODE_ENV: 'development' }));
  await seedDemoData(service.database);
});
afterAll(() => service?.stop());

const generate = (username: string) => new BrowserSession(base).request('/ott/generate', { json: { username } });

describe('spec One-time token login 4: generation and consumption are rate limited, with lockout of the source', () => {
  it('the sixth generation for one username within the window is 429 with Retry-After, known and unknown accounts alike', async () => {
    for (const username of ['alice@acme.test', 'ghost@nowhere.test']) {
      for (let i = 0; i < 5; i++) expect((await generate(username)).status).toBe(202);
      const refused = await generate(username);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(JSON.parse(refused.text)).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    }
    // The answers for the known and the unknown address are the same.
    const [known, unknown] = [await generate('alice@acme.test'), await generate('ghost@nowhere.test')];
    expect([known.status, known.text.replace(/\d+ seconds/, 'N seconds')]).toEqual([
      unknown.status,
      unknown.text.replace(/\d+ seconds/, 'N seconds'),
    ]);
  });

  it('wrong tokens slow down, then stop, the source that sends them (429 with Retry-After)', async () => {
    const browser = new BrowserSession(base);
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 4; i++) {
      const answer = await browser.request('/login/ott', { form: { token: 'A'.repeat(43) } });
      statuses.push(answer.status);
      if (answer.status === 429) retryAfter = answer.headers.get('retry-after');
    }
    expect(statuses.slice(0, 2)).toEqual([401, 401]);
    expect(statuses).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
  });
});
