import { SIGN_IN_FACTORS } from '@latchkey/auth';
import { seedDemoData } from '@latchkey/db';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phraseFactor } from './fixtures/phrase-factor/factor.js';
import { THE_PHRASE } from './fixtures/phrase-factor/web.js';
import { BrowserSession } from './support/browser-session.js';
import { proveLink } from './support/link-sign-in.js';
import { demoAuthorization } from './support/oidc.js';
import { policyFile } from './support/policy-file.js';
import { startLocalhostService, type TestService } from './support/service.js';

// A factor is one folder exporting one descriptor, and one line of the registry: here the registry is the
// server's own plus a test-only factor from a fixture folder (a phrase, without storage), and nothing else
// changes. A rule asks everyone for a link and the phrase.
let service: TestService;
let base: string;

beforeAll(async () => {
  const AUTH_POLICY_FILE = policyFile({
    rules: [{ name: 'phrase', appliesTo: { everyone: true }, anyOf: [[{ factor: 'OTT' }, { factor: 'PHRASE' }]] }],
  });
  ({ service, base } = await startLocalhostService(
    { NODE_ENV: 'development', AUTH_POLICY_FILE },
    { factors: [...SIGN_IN_FACTORS, phraseFactor] },
  ));
  await seedDemoData(service.database);
});
afterAll(() => service?.stop());

describe('a factor registered from its own folder signs in end to end', () => {
  it('the rule may name it; without it registered, the same rule stops start-up as an unknown factor', async () => {
    const AUTH_POLICY_FILE = policyFile({
      rules: [{ name: 'phrase', appliesTo: { everyone: true }, anyOf: [[{ factor: 'OTT' }, { factor: 'PHRASE' }]] }],
    });
    await expect(startLocalhostService({ NODE_ENV: 'development', AUTH_POLICY_FILE })).rejects.toThrow(/rules\.0\.anyOf\.0\.1\.factor/);
  });

  it('the factors page names it and offers its form; a wrong phrase is refused; the right one completes the sign-in with its amr', async () => {
    const browser = new BrowserSession(base);
    const consumed = await proveLink(browser, service.config.dataDir, 'bob@acme.test');
    expect(consumed.location).toBe('/login/factors');

    const factors = await browser.request('/login/factors');
    expect(factors.status).toBe(200);
    expect(factors.text).toContain('<ul id="still-needed"><li>the phrase you know</li></ul>');
    expect(factors.text).toContain('action="/login/phrase"');

    const wrong = await browser.request('/login/phrase', { form: { phrase: 'abracadabra' } });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('The phrase is not right.');

    const right = await browser.request('/login/phrase', { form: { phrase: THE_PHRASE } });
    expect(right.status).toBe(303);
    expect(right.location).toBe('/account');
    const account = await browser.request('/account');
    expect(account.text).toContain('with a sign-in link or code by e-mail and the phrase you know');

    // An application's sign-in in this browser reports the factor's method.
    const application = demoAuthorization(base);
    let location = (await browser.request(application.path)).location!;
    for (let hop = 0; hop < 5 && !location.startsWith(`${base}/callback`); hop++) location = (await browser.request(location)).location!;
    const tokens = await application.redeem(location);
    expect(tokens.status).toBe(200);
    expect(decodeJwt(tokens.json.id_token)).toMatchObject({ amr: ['otp', 'kba', 'mfa'], email: 'bob@acme.test' });
  });
});
