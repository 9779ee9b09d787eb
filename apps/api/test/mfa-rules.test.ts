import { readFileSync } from 'node:fs';
import { seedDemoData, sql } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { BrowserSession } from './support/browser-session.js';
import { proveLink } from './support/link-sign-in.js';
import { outboxOf, tokenOf } from './support/outbox.js';
import { policyFile, temporaryFile } from './support/policy-file.js';
import { startLocalhostService, type TestService } from './support/service.js';

describe('spec Multi-factor rules 4: start-up refuses a rule that would enforce nothing', () => {
  const load =
    (policy: unknown, env: Record<string, string> = {}) =>
    () =>
      loadConfig({
        env: { NODE_ENV: 'test', AUTH_POLICY_FILE: policyFile(policy), ...env },
        readFile: (file) => readFileSync(file, 'utf8'),
      });

  it.each([
    ['X509 (no client-certificate listener)', 'X509', {}],
    ['AUTHORIZATION_CODE (no upstream provider)', 'AUTHORIZATION_CODE', {}],
    ['PASSWORD (PASSWORDS=false)', 'PASSWORD', { PASSWORDS: 'false' }],
  ])('a rule requiring %s stops start-up with a message naming it', (_name, factor, env) => {
    expect(load({ rules: [{ name: 'strict', appliesTo: { everyone: true }, anyOf: [[{ factor }]] }] }, env)).toThrow(
      new RegExp(`requires ${factor}, which nothing on this server contributes`),
    );
  });

  it('a password rule starts when passwords are on (the default)', () => {
    expect(
      load({ rules: [{ name: 'pw', appliesTo: { everyone: true }, anyOf: [[{ factor: 'OTT' }, { factor: 'PASSWORD' }]] }] }),
    ).not.toThrow();
  });

  it('a passkey rule without a relying party (PUBLIC_URL on an IP address) stops start-up', () => {
    const rule = { rules: [{ name: 'passkeys', appliesTo: { roles: ['ADMIN'] }, anyOf: [[{ factor: 'WEBAUTHN' }]] }] };
    expect(load(rule, { PUBLIC_URL: 'http://127.0.0.1:4000' })).toThrow(/requires WEBAUTHN/);
    expect(load(rule)).not.toThrow();
  });

  it('acr levels: which factors reach each is configurable; the levels themselves and their order are fixed', () => {
    const levels = (first: string[][]) => ({
      acrLevels: [
        { value: 'urn:latchkey:acr:1fa', anyOf: first },
        { value: 'urn:latchkey:acr:2fa', anyOf: [['OTT', 'TOTP']] },
        { value: 'urn:latchkey:acr:phr', anyOf: [['WEBAUTHN']] },
      ],
    });
    expect(load(levels([['OTT'], ['WEBAUTHN']]))).not.toThrow();
    expect(load(levels([['X509']]))).toThrow(/lists X509, which nothing on this server contributes/);
    expect(load({ acrLevels: [{ value: 'urn:example:gold', anyOf: [['OTT']] }] })).toThrow(/acrLevels must be, in this order/);
  });

  it('unknown keys, unknown factors and bad JSON are refused with their path', () => {
    expect(load({ rules: [{ name: 'x', appliesTo: { everyone: true }, anyOf: [[{ factor: 'SMS' }]] }] })).toThrow(
      /rules\.0\.anyOf\.0\.0\.factor/,
    );
    expect(load({ rules: [], extra: true })).toThrow(/AUTH_POLICY_FILE/);
    const broken = temporaryFile('broken.json', '{ not json');
    expect(() =>
      loadConfig({ env: { NODE_ENV: 'test', AUTH_POLICY_FILE: broken }, readFile: (file) => readFileSync(file, 'utf8') }),
    ).toThrow(/not valid JSON/);
  });
});

describe('spec Multi-factor rules 2: a factor with a validity duration stops counting when it passes', () => {
  let service: TestService;
  let base: string;

  beforeAll(async () => {
    // Everyone: a one-time token counts for a minute (then it is needed again), a passkey for the session.
    const AUTH_POLICY_FILE = policyFile({
      rules: [
        { name: 'fresh-email', appliesTo: { everyone: true }, anyOf: [[{ factor: 'OTT', maxAgeSeconds: 60 }], [{ factor: 'WEBAUTHN' }]] },
      ],
    });
    ({ service, base } = await startLocalhostService({ NODE_ENV: 'development', AUTH_POLICY_FILE }));
    await seedDemoData(service.database);
  });
  afterAll(() => service?.stop());

  /** Two minutes pass: the factors behind every provider session are dated back rather than waited for. */
  const twoMinutesPass = () =>
    service.database.db.execute(
      sql`update provider_session_factors set factors = (select jsonb_agg(jsonb_set(grant_, '{issuedAt}', to_jsonb((grant_->>'issuedAt')::bigint - 120))) from jsonb_array_elements(factors) as grant_)`,
    );

  it('after the duration the account page asks for the factor again, says so, and a new link restores it', async () => {
    const outbox = outboxOf(service.config.dataDir);
    const browser = new BrowserSession(base);
    await browser.request('/login');
    let before = outbox.count();
    await browser.request('/ott/generate', { form: { username: 'bob@acme.test' } });
    const signedIn = await browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, 'bob@acme.test')) } });
    expect(signedIn.location).toBe('/account');
    expect((await browser.request('/account')).status).toBe(200);

    await twoMinutesPass();
    const expired = await browser.request('/account');
    expect(expired.status).toBe(303);
    expect(expired.location).toBe('/login/factors');
    const factors = await browser.request('/login/factors');
    expect(factors.status).toBe(200);
    expect(factors.text).toContain('Your account needs one more step to sign in.');
    expect(factors.text).toMatch(/<ul id="still-needed"><li>a sign-in link or code by e-mail<\/li><li>a passkey<\/li><\/ul>/);
    // The account's forms refuse the stale session too.
    expect((await browser.request('/account/passkeys/remove', { form: { id: 'abc' } })).status).toBe(401);

    before = outbox.count();
    const resend = await browser.request('/ott/generate', { form: { username: 'bob@acme.test' } });
    expect(resend.status).toBe(303);
    const renewed = await browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, 'bob@acme.test')) } });
    expect(renewed.location).toBe('/account');
    expect((await browser.request('/account')).status).toBe(200);
  });

  it('an application asking for a sign-in of a session past its duration gets the login prompt again', async () => {
    const browser = new BrowserSession(base);
    await proveLink(browser, service.config.dataDir, 'alice@acme.test');
    const authorize = () =>
      browser.request(
        `/oidc/auth?${new URLSearchParams({ client_id: 'latchkey-demo', response_type: 'code', redirect_uri: `${base}/callback`, scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', state: 's' })}`,
      );
    // Fresh: straight back to the application with a code (via the provider's resume step).
    let next = (await authorize()).location!;
    for (let hop = 0; hop < 3 && !next.startsWith(`${base}/callback`); hop++) next = (await browser.request(next)).location!;
    expect(next).toMatch(/\/callback\?code=/);
    await twoMinutesPass();
    const prompt = await authorize();
    expect(prompt.location).toMatch(/^\/interaction\//);
    // Only the stale factor is missing: the interaction goes straight to the factor page.
    const interaction = await browser.request(prompt.location!);
    expect(interaction.status).toBe(303);
    expect(interaction.location).toBe('/login/factors');
  });
});

describe("spec Multi-factor rules 8: credentials are only ever entered on the provider's own pages", () => {
  let service: TestService;
  let base: string;
  beforeAll(async () => {
    ({ service, base } = await startLocalhostService({ NODE_ENV: 'development' }));
    await seedDemoData(service.database);
  });
  afterAll(() => service?.stop());

  it("no password grant or other flow where a client trades the user's credentials for tokens", async () => {
    const discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as { grant_types_supported: string[] };
    expect(discovery.grant_types_supported).not.toContain('password');
    expect(discovery.grant_types_supported.some((grant) => grant.includes('token-exchange') || grant.includes('ciba'))).toBe(false);
    for (const body of <Record<string, string>[]>[
      { grant_type: 'password', username: 'alice@acme.test', password: 'anything', client_id: 'latchkey-demo' },
      {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: 'x',
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        client_id: 'latchkey-demo',
      },
    ]) {
      const answer = await fetch(`${base}/oidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { error: string }).error).toBe('unsupported_grant_type');
    }
  });
});
