import { oneTimeTokens, seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { demoAuthorization } from './support/oidc.js';
import { codeOf, outboxOf, tokenOf } from './support/outbox.js';
import { startLocalhostService, type TestService } from './support/service.js';

describe('BIND_LINKS_TO_BROWSER=true, a link signs in only the browser that asked (OWASP ASVS 6.6.2)', () => {
  let service: TestService;
  let base: string;

  beforeAll(async () => {
    ({ service, base } = await startLocalhostService({ NODE_ENV: 'development', BIND_LINKS_TO_BROWSER: 'true' }));
    await seedDemoData(service.database);
  }, 60_000);
  afterAll(() => service?.stop());

  const outstanding = async () => (await service.database.db.select().from(oneTimeTokens)).length;

  it('opened in another browser (with or without a binding of its own) the link signs nothing in, uses nothing up and says to type the code where it was asked; the code there completes the pending request', async () => {
    const asking = new BrowserSession(base);
    const application = demoAuthorization(base);
    const start = await asking.request(application.path);
    await asking.request(start.location!);
    const outbox = outboxOf(service.config.dataDir);
    const before = outbox.count();
    await asking.request('/ott/generate', { form: { username: 'alice@acme.test' } });
    const message = await outbox.next(before, 'alice@acme.test');
    const tokensBefore = await outstanding();

    // A browser with no binding, and one with a binding of its own (it asked for a link too, for bob).
    const stranger = new BrowserSession(base);
    const other = new BrowserSession(base);
    await other.request('/ott/generate', { form: { username: 'bob@acme.test' } });
    await outbox.next(before + 1, 'bob@acme.test');
    for (const browser of [stranger, other]) {
      const opened = await browser.request('/login/ott', { form: { token: tokenOf(message) } });
      expect(opened.status).toBe(403);
      expect(opened.text).toContain('Type the 6-digit code from the message in that browser');
      expect(opened.location).toBeNull();
      expect(browser.cookies.has('_session')).toBe(false);
    }
    expect(await outstanding()).toBe(tokensBefore + 1); // nothing used up (bob's link is the one more)

    // The page of the link says the link and code work only in the browser that asked.
    expect((await stranger.request(`/login/ott?token=${tokenOf(message)}`)).text).toContain('work only in this browser');

    // In the browser that asked, the message's code completes the pending authorization request.
    const typed = await asking.request('/login/ott', { form: { token: codeOf(message) } });
    expect(typed.status).toBe(303);
    let location = typed.location!;
    for (let hop = 0; hop < 5 && !location.startsWith(`${base}/callback`); hop++) location = (await asking.request(location)).location!;
    const tokens = await application.redeem(location);
    expect(tokens.status).toBe(200);
    // The link died with its code.
    expect((await asking.request('/login/ott', { form: { token: tokenOf(message) } })).status).toBe(401);
  });

  it('in the browser that asked, the link itself still signs in', async () => {
    const asking = new BrowserSession(base);
    const outbox = outboxOf(service.config.dataDir);
    await asking.request('/login');
    const before = outbox.count();
    await asking.request('/ott/generate', { form: { username: 'erin@acme.test' } });
    const consumed = await asking.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, 'erin@acme.test')) } });
    expect(consumed.status).toBe(303);
    expect(consumed.location).toBe('/account');
  });

  it('a token that is no token at all is still the one invalid answer (401), not the other-browser page', async () => {
    const stranger = new BrowserSession(base);
    const answer = await stranger.request('/login/ott', { form: { token: 'A'.repeat(43) } });
    expect(answer.status).toBe(401);
  });
});
