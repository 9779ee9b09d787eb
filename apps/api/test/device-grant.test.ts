import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { oidcModels } from '@latchkey/db';
import { testTempDir } from '@latchkey/db/testing';
import { and, eq, sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireBuild, run } from './support/built-cli.js';
import { BrowserSession } from './support/browser-session.js';
import { hasChromium, launchChromium, signInAtProvider } from './support/chromium.js';
import { confirmUserCode, DEVICE_GRANT, deviceSignedIn, enterUserCode, USER_CODE } from './support/device.js';
import type { outboxOf } from './support/outbox.js';
import { cspViolations, discover, startProviderFor } from './support/relying-party.js';
import { postGraphQL, type TestService } from './support/service.js';

const SECRET = 'device-kiosk-client-secret-0123456789abcdef';

/** Every answer of the token endpoint a client got, and when (its customFetch). */
function recordTokenAnswers(config: oidc.Configuration) {
  const answers: { at: number; error: string | undefined }[] = [];
  config[oidc.customFetch] = async (url, options) => {
    const response = await fetch(url, options as RequestInit);
    if (new URL(url).pathname === '/oidc/token') {
      const body = (await response.clone().json()) as { error?: string };
      answers.push({ at: performance.now(), error: body.error });
    }
    return response;
  };
  return answers;
}

/** `latchkey login --url base` as a child process, with the code and address it prints once it has printed them. */
function startLogin(base: string, env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [CLI, 'login', '--url', base], {
    env: { PATH: process.env['PATH'], ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const printed = new Promise<{ userCode: string; complete: string }>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const code = /enter the code (\S+)\n/.exec(stdout)?.[1];
      const complete = /or open (\S+)\n/.exec(stdout)?.[1];
      if (code && complete) resolve({ userCode: code, complete });
    });
    child.once('close', () => reject(new Error(`login ended before printing its code: ${stdout}${stderr}`)));
  });
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { printed, exited, child };
}

describe.runIf(hasChromium)('devices and CLIs: the device grant (RFC 8628) with a person signing in in Chromium', () => {
  let service: TestService;
  let base: string;
  let outbox: ReturnType<typeof outboxOf>;
  let browser: Browser;
  let tv: oidc.Configuration;
  requireBuild();

  beforeAll(async () => {
    ({ service, base, outbox } = await startProviderFor([
      // A public client (a TV, a CLI) and a confidential one (a kiosk with a secret), both with only the device grant:
      // neither has a redirect URI.
      {
        client_id: 'tv',
        client_name: 'Living-room TV',
        grant_types: [DEVICE_GRANT, 'refresh_token'],
        response_types: [],
        token_endpoint_auth_method: 'none',
        first_party: true,
      },
      // A third-party device app (no first_party): the person's consent is asked for after the sign-in.
      { client_id: 'partner-tv', grant_types: [DEVICE_GRANT], response_types: [], token_endpoint_auth_method: 'none' },
      {
        client_id: 'kiosk',
        client_secret: SECRET,
        grant_types: [DEVICE_GRANT],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
        first_party: true,
      },
    ]));
    browser = await launchChromium();
    tv = await discover(base, 'tv');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  /** A fresh browser whose CSP violations are collected (every header enforced). */
  async function freshPage(): Promise<{ page: Page; violations: string[] }> {
    const page = await (await browser.newContext()).newPage();
    return { page, violations: cspViolations(page).list };
  }

  it('discovery names the device authorization endpoint; a code is base-20 XXXX-XXXX and lives 10 minutes', async () => {
    const metadata = tv.serverMetadata();
    expect(metadata.device_authorization_endpoint).toBe(`${base}/oidc/device/auth`);
    expect(metadata.grant_types_supported).toContain(DEVICE_GRANT);
    const started = await oidc.initiateDeviceAuthorization(tv, { scope: 'openid documents:read' });
    expect(started.user_code).toMatch(USER_CODE);
    expect(started).toMatchObject({
      expires_in: 600,
      verification_uri: `${base}/oidc/device`,
      verification_uri_complete: `${base}/oidc/device?user_code=${started.user_code}`,
    });
    // A client without the grant is refused.
    const demo = await discover(base, 'latchkey-demo');
    await expect(oidc.initiateDeviceAuthorization(demo, { scope: 'openid' })).rejects.toMatchObject({
      status: 400,
      error: 'invalid_request',
      error_description: expect.stringContaining(DEVICE_GRANT),
    });
  });

  it('authorization_pending, then slow_down to a client that polls too fast (it backs off); the person signs in; the token carries the browser sign-in; a replay is refused', async () => {
    const started = await oidc.initiateDeviceAuthorization(tv, { scope: 'openid documents:read' });
    const poll = async () =>
      (await fetch(`${base}/oidc/token`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: started.device_code, client_id: 'tv' }),
      }).then((response) => response.json())) as { error?: string };
    // Two polls at once: the first is told to wait, the second (within POLL_WINDOW_SECONDS of it) to slow down.
    const twice = await Promise.all([poll(), poll()]);
    expect(twice.map((answer) => answer.error).sort()).toEqual(['authorization_pending', 'slow_down']);

    // An eager client (1 s) meets slow_down and adds 5 s to its interval (openid-client does, as RFC 8628 says).
    const answers = recordTokenAnswers(tv);
    const polling = oidc.pollDeviceAuthorizationGrant(tv, { ...started, interval: 1 });
    polling.catch(() => {});
    // Its second poll comes a second after its first: wait until it has been told to slow down (whatever the
    // machine's pace, the person signs in only after that).
    await expect.poll(() => answers.some((answer) => answer.error === 'slow_down'), { timeout: 60_000 }).toBe(true);
    const { page, violations } = await freshPage();
    const before = Math.floor(Date.now() / 1000);
    await enterUserCode(page, base, started.user_code, 'Living-room TV');
    await page.waitForURL(/\/interaction\//);
    await signInAtProvider(page, outbox, 'alice@acme.test', 'code');
    await deviceSignedIn(page);
    expect(await page.locator('main').textContent()).toContain('Living-room TV is signed in');
    const tokens = await polling;

    // After the first slow_down it polls every 6 s (its 1 s plus 5, RFC 8628 3.5), so it is never told again.
    const slowedAt = answers.findIndex((answer) => answer.error === 'slow_down');
    expect(answers.slice(0, slowedAt).every((answer) => answer.error === 'authorization_pending')).toBe(true);
    for (let i = slowedAt + 1; i < answers.length; i++) {
      expect(answers[i]!.error).not.toBe('slow_down');
      expect(answers[i]!.at - answers[i - 1]!.at).toBeGreaterThanOrEqual(5_900);
    }
    expect(answers.at(-1)!.error).toBeUndefined();

    // amr, acr and auth_time are those of the sign-in in the browser (here a one-time code: otp).
    const access = decodeJwt(tokens.access_token);
    const id = tokens.claims()!;
    expect(access).toMatchObject({
      aud: service.config.tokens.audience,
      client_id: 'tv',
      amr: ['otp'],
      acr: id['acr'],
      auth_time: id.auth_time,
    });
    expect(id['amr']).toEqual(['otp']);
    // ... and its session: ending that session in the browser refuses the device's token too.
    expect(access['sid']).toEqual(expect.any(String));
    expect(access['auth_time']).toBeGreaterThanOrEqual(before - 1);
    expect(String(access['scope']).split(' ')).toContain('documents:read');
    const viewer = await postGraphQL(`${base}/graphql`, { query: '{ viewer { amr scope } }' }, { token: tokens.access_token });
    expect(viewer.json.data.viewer).toMatchObject({ amr: ['otp'], scope: expect.arrayContaining(['documents:read']) });

    // Single use: its user code, typed again, is refused ...
    await page.goto(`${base}/oidc/device`);
    await page.getByLabel('Code').fill(started.user_code);
    const again = page.waitForResponse((response) => response.url() === `${base}/oidc/device` && response.request().method() === 'POST');
    await page.getByRole('button', { name: 'Continue' }).click();
    expect((await again).status()).toBe(400);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('already been used');
    // ... and the device code, replayed after its success, gets nothing: the provider takes the replay for a stolen
    // code and revokes what it issued (the refresh token; the access token ends with its short lifetime).
    await expect(oidc.pollDeviceAuthorizationGrant(tv, { ...started, interval: 0 })).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.refreshTokenGrant(tv, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });

    // The device's token shares the browser sign-in's session: signing out of Latchkey there refuses it too.
    await page.goto(`${base}/account`);
    await page.getByRole('link', { name: 'Sign out of Latchkey in this browser' }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await expect.poll(() => page.locator('main').textContent()).toContain('You are signed out of Latchkey in this browser.');
    const refused = () => postGraphQL(`${base}/graphql`, { query: '{ viewer { amr } }' }, { token: tokens.access_token });
    await expect.poll(async () => (await refused()).status, { timeout: 10_000 }).toBe(401);
    expect(violations).toEqual([]);
  }, 90_000);

  it('verification_uri_complete skips typing the code; a confidential client authenticates at the token endpoint', async () => {
    const kiosk = await discover(base, 'kiosk', oidc.ClientSecretBasic(SECRET));
    const started = await oidc.initiateDeviceAuthorization(kiosk, { scope: 'openid api' });
    const polling = oidc.pollDeviceAuthorizationGrant(kiosk, started);
    polling.catch(() => {});
    const { page, violations } = await freshPage();
    await page.goto(started.verification_uri_complete!);
    await confirmUserCode(page, started.user_code);
    await page.waitForURL(/\/interaction\//);
    await signInAtProvider(page, outbox, 'bob@acme.test', 'code');
    await deviceSignedIn(page);
    const tokens = await polling;
    const viewer = await postGraphQL(`${base}/graphql`, { query: '{ viewer { user { email } } }' }, { token: tokens.access_token });
    expect(viewer.json.data).toEqual({ viewer: { user: { email: 'bob@acme.test' } } });
    expect(violations).toEqual([]);
    // The wrong secret: the token endpoint does not know the client.
    const impostor = await discover(base, 'kiosk', oidc.ClientSecretBasic(`${SECRET}-wrong`));
    await expect(oidc.initiateDeviceAuthorization(impostor, { scope: 'openid' })).rejects.toMatchObject({
      status: 401,
      cause: [{ parameters: { error: 'invalid_client' } }],
    });
  }, 60_000);

  it("a third-party device app: after the code and the sign-in, the flow goes on to the consent step (the provider's next interaction)", async () => {
    const partner = await discover(base, 'partner-tv');
    const started = await oidc.initiateDeviceAuthorization(partner, { scope: 'openid documents:read' });
    const { page, violations } = await freshPage();
    const interactions = new Set<string>();
    page.on('request', (request) => {
      const uid = /\/interaction\/([A-Za-z0-9_-]+)$/.exec(new URL(request.url()).pathname)?.[1];
      if (uid) interactions.add(uid);
    });
    await enterUserCode(page, base, started.user_code, 'partner-tv');
    await page.waitForURL(/\/interaction\//);
    await signInAtProvider(page, outbox, 'carol@globex.test', 'code');
    // The login prompt was one interaction; the consent prompt is the next one.
    await expect.poll(() => interactions.size).toBe(2);
    expect(violations).toEqual([]);
  });

  it('an expired code: the device is told expired_token, the person that the code has expired', async () => {
    const started = await oidc.initiateDeviceAuthorization(tv, { scope: 'openid' });
    // Ten minutes pass for this code: its expiry (the provider's own judgement, from the payload) is in the past.
    const userCode = started.user_code.replace('-', '');
    await service.database.db
      .update(oidcModels)
      .set({ payload: sql`jsonb_set(${oidcModels.payload}, '{exp}', to_jsonb(extract(epoch from now())::int - 1))` })
      .where(and(eq(oidcModels.model, 'DeviceCode'), eq(oidcModels.userCode, userCode)));
    await expect(oidc.pollDeviceAuthorizationGrant(tv, { ...started, interval: 0 })).rejects.toMatchObject({ error: 'expired_token' });
    const { page } = await freshPage();
    await page.goto(started.verification_uri_complete!);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('has expired');
  });

  it('pnpm latchkey login prints the code and the address, waits for the sign-in and stores the token (0600); whoami shows the account and scopes over the API', async () => {
    const home = testTempDir('device-cli');
    try {
      const env = { XDG_CONFIG_HOME: home };
      const before = await run(CLI, ['whoami', '--url', base], env, home);
      expect([before.code, before.stderr]).toEqual([1, `latchkey: not signed in to ${base}: run pnpm latchkey login --url ${base}\n`]);

      const login = startLogin(base, env);
      const { userCode, complete } = await login.printed;
      expect(userCode).toMatch(USER_CODE);
      expect(complete).toBe(`${base}/oidc/device?user_code=${userCode}`);
      const { page } = await freshPage();
      await page.goto(complete);
      await confirmUserCode(page, userCode, 'Latchkey command line');
      await page.waitForURL(/\/interaction\//);
      await signInAtProvider(page, outbox, 'alice@acme.test', 'code');
      await deviceSignedIn(page);
      const done = await login.exited;
      const file = path.join(home, 'latchkey', 'credentials.json');
      expect([done.code, done.stderr, done.stdout.split('\n').at(-2)]).toEqual([0, '', `Signed in to ${base}. Token stored in ${file}`]);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const stored = JSON.parse(readFileSync(file, 'utf8')) as { servers: Record<string, { client_id: string; access_token: string }> };
      expect(stored.servers[base]).toMatchObject({ client_id: 'latchkey-cli' });
      expect(decodeJwt(stored.servers[base]!.access_token)).toMatchObject({ client_id: 'latchkey-cli', amr: ['otp'] });

      const whoami = await run(CLI, ['whoami', '--url', `${base}/`], env, home);
      expect([whoami.code, whoami.stderr]).toEqual([0, '']);
      const lines = whoami.stdout.split('\n');
      expect(lines[0]).toBe('alice@acme.test (Alice)');
      expect(lines).toContain(`server: ${base}`);
      expect(lines.find((line) => line.startsWith('scopes: '))!.split(' ')).toEqual(
        expect.arrayContaining(['openid', 'documents:read', 'documents:write', 'account:read']),
      );

      const logout = await run(CLI, ['logout', '--url', base], env, home);
      expect([logout.code, logout.stdout]).toEqual([0, `Signed out of ${base} on this machine\n`]);
      expect((await run(CLI, ['whoami', '--url', base], env, home)).code).toBe(1);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 90_000);

  // Last: it leaves this address paused for a while (the sign-in limits of every factor count the same failures).
  it('a wrong code is refused, a burst of guesses is rate limited (429, Retry-After), and the same address is paused at sign-in too', async () => {
    const { page } = await freshPage();
    await page.goto(`${base}/oidc/device`);
    await page.getByLabel('Code').fill('BBBB-BBBB');
    const answer = page.waitForResponse((response) => response.url() === `${base}/oidc/device` && response.request().method() === 'POST');
    await page.getByRole('button', { name: 'Continue' }).click();
    expect((await answer).status()).toBe(400);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not valid');

    // A script guessing codes: each guess carries the form's fresh xsrf value, as a browser's would.
    const guesser = new BrowserSession(base);
    let form = await guesser.request('/oidc/device');
    // The page's headers: nothing loads, forms post only here, never framed, never cached, no referrer.
    expect(form.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect([form.headers.get('cache-control'), form.headers.get('referrer-policy')]).toEqual(['no-store', 'no-referrer']);
    const statuses: number[] = [];
    for (let guess = 0; guess < 6 && !statuses.includes(429); guess++) {
      const xsrf = /name="xsrf" value="([0-9a-f]+)"/.exec(form.text)?.[1] ?? '';
      form = await guesser.request('/oidc/device', { form: { xsrf, user_code: `BBBB-BBB${'CDFGHJ'[guess]}` } });
      statuses.push(form.status);
      if (form.status === 429) {
        expect(Number(form.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(form.text).toContain('Too many attempts');
      }
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((status) => status === 400)).toBe(true);
    // The same counters as every sign-in: this address's one-time token is refused for now as well.
    const signIn = await guesser.request('/login/ott', { form: { token: 'A'.repeat(43) } });
    expect(signIn.status).toBe(429);
  }, 60_000);
});
