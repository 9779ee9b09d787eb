import { seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { outboxOf, tokenOf } from './support/outbox.js';
import { postGraphQL, startLocalhostService, type TestService } from './support/service.js';
import { signInThroughDemo } from './support/sessions.js';

describe('the account page lists and ends sessions', () => {
  let service: TestService;
  let base: string;
  let browsers = 0;

  beforeAll(async () => {
    ({ service, base } = await startLocalhostService({ NODE_ENV: 'development', TRUST_PROXY: 'loopback' }));
    await seedDemoData(service.database);
  }, 60_000);
  afterAll(() => service?.stop());

  /** A browser signed in on the provider's own page (no application waiting). */
  async function pageBrowser(email: string, userAgent: string): Promise<BrowserSession> {
    const browser = new BrowserSession(base);
    const headers = { 'user-agent': userAgent, 'x-forwarded-for': `203.0.113.${++browsers}` };
    const outbox = outboxOf(service.config.dataDir);
    await browser.request('/login', { headers });
    const before = outbox.count();
    await browser.request('/ott/generate', { form: { username: email }, headers });
    const consumed = await browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, email)) }, headers });
    expect(consumed.location).toBe('/account');
    return browser;
  }
  const sessionIds = (html: string) => [...html.matchAll(/data-session="([^"]+)"/g)].map((match) => match[1]!);

  it('lists every signed-in browser of the account (user agent, address, the application used), this one marked; ending another signs it out and refuses its tokens', async () => {
    const desk = await pageBrowser('alice@acme.test', 'DeskBrowser/2.0');
    const app = await signInThroughDemo(base, service.config.dataDir, 'alice@acme.test', {
      userAgent: 'Tablet/1.0',
      forwardedFor: '198.51.100.7',
    });
    const page = await desk.request('/account');
    expect(page.status).toBe(200);
    expect(sessionIds(page.text)).toHaveLength(2);
    expect(sessionIds(page.text)).toContain(app.sessionId);
    expect(page.text).toContain('Tablet/1.0 from 198.51.100.7');
    expect(page.text).toContain('used through latchkey-demo');
    expect(page.text).toMatch(/DeskBrowser\/2\.0 from 203\.0\.113\.\d+<\/strong> <small>[^<]*<\/small> <small>\(this browser/);

    const ended = await desk.request('/account/sessions/end', { form: { id: app.sessionId } });
    expect(ended.status).toBe(303);
    expect(ended.location).toBe('/account?done=session-ended');
    expect((await postGraphQL(`${base}/graphql`, { query: '{ viewer { subject } }' }, { token: app.accessToken })).status).toBe(401);
    // The ended browser has no session left: its account page sends it to sign in.
    expect((await app.browser.request('/account')).location).toBe('/login');
    expect(sessionIds((await desk.request('/account')).text)).toHaveLength(1);
  });

  it('"End every other session" keeps only this browser; bad input is a clear 4xx and ends nothing', async () => {
    const here = await pageBrowser('bob@acme.test', 'Here/1.0');
    const there = await pageBrowser('bob@acme.test', 'There/1.0');
    expect((await here.request('/account/sessions/end', { form: { id: 'not a session' } })).status).toBe(400);
    expect((await here.request('/account/sessions/end', { form: { id: 'AAAAAAAAAAAAAAAAAAAAA' } })).status).toBe(404);
    const crossSite = await here.request('/account/sessions/end', {
      form: { which: 'others' },
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    expect((await there.request('/account')).status).toBe(200);
    expect(sessionIds((await here.request('/account')).text)).toHaveLength(2);

    const all = await here.request('/account/sessions/end', { form: { which: 'others' } });
    expect(all.location).toBe('/account?done=sessions-ended');
    expect((await there.request('/account')).location).toBe('/login');
    expect(sessionIds((await here.request('/account')).text)).toHaveLength(1);
    // A guest's post is refused.
    expect((await new BrowserSession(base).request('/account/sessions/end', { form: { which: 'others' } })).status).toBe(401);
  });
});
