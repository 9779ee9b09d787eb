import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { seedDemoData, webauthnChallenges, eq } from '@latchkey/db';
import { decodeJwt, type JWK } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomToken } from '@latchkey/auth';
import { generateSigningJwk, parseSigningKey, type SigningKey, mintAccessToken } from '@latchkey/auth/tokens';
import { BrowserSession, freePort } from './support/browser-session.js';
import { hasChromium, launchChromium } from './support/chromium.js';
import { demoOf } from './support/demo.js';
import { challengeOf, create, get, openAuthenticator, post } from './support/passkey-browser.js';
import { createOwnDatabase, databaseKind, serviceDataDir, postGraphQL, startTestService, type TestService } from './support/service.js';
import { onPostgres, startTcpProxy } from '@latchkey/db/testing';
import { COST_REPORTED } from './support/cost.js';

// Passkeys across a restart and across two instances, over HTTP with real WebAuthn ceremonies: Node talks to
// the instance each step is meant for (with the cookies and the Origin header a browser would send), and
// Chromium, on a page of the service's public origin, is the authenticator (CDP virtual authenticator, CTAP2,
// platform, user verification) that signs the challenges those instances handed out.

/** One signing key for every life and every instance of the service, as an operator configures it. */
async function sharedKey(): Promise<{ jwk: JWK; key: SigningKey }> {
  const jwk = await generateSigningJwk();
  return { jwk, key: await parseSigningKey(JSON.stringify(jwk)) };
}

/** A bearer access token for `subject` signed with the shared key (TestService.token() signs with its own). */
const bearer = (key: SigningKey, service: TestService, subject: string) =>
  mintAccessToken(key, {
    subject,
    issuer: service.config.tokens.issuer,
    audience: service.config.tokens.audience,
    ttlSeconds: 600,
    amr: ['otp'],
  });

/** The `request` log lines of an instance for one path: proof of which instance answered. */
const answered = (service: TestService, pathname: string) =>
  service.logs.filter((line) => line['msg'] === 'request' && line['path'] === pathname).map((line) => Number(line['status']));

/** The same URL path on the instance `base` (the service's redirects name the public origin or a bare path). */
const on = (base: string, location: string) => {
  const url = new URL(location, base);
  return `${base}${url.pathname}${url.search}`;
};

/** Starts an authorization-code + PKCE request of the demo client at `base`; returns the pending interaction path. */
async function authorize(session: BrowserSession, base: string, publicBase: string) {
  const verifier = randomToken();
  const state = randomBytes(8).toString('hex');
  const params = new URLSearchParams({
    client_id: 'latchkey-demo',
    response_type: 'code',
    redirect_uri: `${publicBase}/callback`,
    scope: 'openid email profile api',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state,
    nonce: randomBytes(8).toString('hex'),
  });
  const start = await session.request(`${base}/oidc/auth?${params}`);
  expect(start.status).toBe(303);
  expect(start.location).toMatch(/^\/interaction\/[A-Za-z0-9_-]+$/);
  const prompt = await session.request(`${base}${start.location!}`);
  expect(prompt.status).toBe(200);
  return { interaction: start.location!, verifier, state };
}

/**
 * After a passkey sign-in answered `continue`: follows it through the provider (interaction at `finishAt`,
 * token at `tokenAt`) and returns the ID token's claims and the access token.
 */
async function finishSignIn(
  session: BrowserSession,
  flow: { interaction: string; verifier: string; state: string },
  continued: string,
  publicBase: string,
  finishAt: string,
  tokenAt: string,
) {
  expect(continued).toBe(flow.interaction);
  expect(session.cookies.has('lk_signin')).toBe(true);
  const finished = await session.request(on(finishAt, continued));
  expect(finished.status).toBe(303);
  const resumed = await session.request(on(finishAt, finished.location!));
  expect(resumed.status).toBe(303);
  const callback = new URL(resumed.location!);
  expect(`${callback.origin}${callback.pathname}`).toBe(`${publicBase}/callback`);
  expect(callback.searchParams.get('state')).toBe(flow.state);
  const tokenResponse = await fetch(`${tokenAt}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: `${publicBase}/callback`,
      client_id: 'latchkey-demo',
      code_verifier: flow.verifier,
    }),
  });
  expect(tokenResponse.status).toBe(200);
  const tokens = (await tokenResponse.json()) as { id_token: string; access_token: string };
  return { idToken: decodeJwt(tokens.id_token), accessToken: tokens.access_token };
}

describe.runIf(hasChromium)('spec Passkeys 3: registered credentials and user handles are durable', () => {
  it('a passkey registered before a restart of the api signs in after it (same database, same DATA_DIR), through to an ID token with amr swk', async () => {
    const dataDir = serviceDataDir('passkey-restart');
    const port = await freePort();
    const publicBase = `http://localhost:${port}`;
    const { jwk, key } = await sharedKey();
    const env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      PUBLIC_URL: publicBase,
      SIGNING_KEY: JSON.stringify(jwk),
      DATABASE_URL: undefined as string | undefined,
    };
    let dropDatabase: () => Promise<void> = async () => undefined;
    if (databaseKind === 'postgres') {
      // One database for both lives of the service (without DATABASE_URL: PGlite under the one DATA_DIR).
      const own = await createOwnDatabase(process.env['DATABASE_URL']!);
      env.DATABASE_URL = own.url;
      dropDatabase = own.drop;
    }
    const browser = await launchChromium();
    let first: TestService | undefined;
    let second: TestService | undefined;
    try {
      first = await startTestService(env);
      await seedDemoData(first.database);
      const alice = (await demoOf(first)).userId.alice;
      const { page, cdp, authenticatorId } = await openAuthenticator(browser, `${publicBase}/login/ott`);

      // Before the restart: alice, signed in, registers a passkey.
      const enrolling = new BrowserSession(first.url);
      const authorization = `Bearer ${await bearer(key, first, alice)}`;
      const options = await post(enrolling, `${first.url}/webauthn/register/options`, publicBase, {}, { authorization });
      expect(options.status).toBe(200);
      expect(options.json!['rp']).toEqual({ id: 'localhost', name: 'Latchkey' });
      const credential = await create(page, options.json!);
      const registered = await post(
        enrolling,
        `${first.url}/webauthn/register`,
        publicBase,
        { response: credential, label: 'Before the restart' },
        { authorization },
      );
      expect(registered.status).toBe(201);
      expect(registered.json).toMatchObject({ id: credential['id'], label: 'Before the restart', rpId: 'localhost', lastUsedAt: null });
      await first.stop();
      first = undefined;

      // The api process is gone: a request to its port finds nobody.
      await expect(fetch(`${publicBase}/healthz`)).rejects.toThrow();
      // The authenticator (not the server) still holds the one discoverable credential.
      const held = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(held.credentials).toHaveLength(1);

      // After the restart: a new browser session signs in with that passkey alone (no username).
      second = await startTestService(env);
      const signingIn = new BrowserSession(second.url);
      const flow = await authorize(signingIn, second.url, publicBase);
      const request = await post(signingIn, `${second.url}/webauthn/authenticate/options`, publicBase, {});
      expect(request.status).toBe(200);
      expect(request.json!['rpId']).toBe('localhost');
      const assertion = await get(page, request.json!);
      expect(assertion['id']).toBe(credential['id']);
      const signedIn = await post(signingIn, `${second.url}/login/webauthn`, publicBase, { response: assertion });
      expect(signedIn.status).toBe(200);
      expect(signedIn.json).toEqual({ status: 'signed-in', continue: flow.interaction });

      const { idToken, accessToken } = await finishSignIn(
        signingIn,
        flow,
        signedIn.json!['continue'] as string,
        publicBase,
        second.url,
        second.url,
      );
      expect(idToken).toMatchObject({
        iss: publicBase,
        aud: 'latchkey-demo',
        sub: alice,
        email: 'alice@acme.test',
        amr: ['swk'],
        acr: 'urn:latchkey:acr:phr',
      });
      const api = await postGraphQL(
        second.graphqlUrl,
        { query: '{ me { email passkeys { id label lastUsedAt } } viewer { amr } }' },
        { token: accessToken },
      );
      expect(api.json.data.me).toMatchObject({
        email: 'alice@acme.test',
        passkeys: [{ id: credential['id'], label: 'Before the restart' }],
      });
      expect(api.json.data.me.passkeys[0].lastUsedAt).not.toBeNull();
      expect(api.json.data.viewer).toEqual({ amr: ['swk'] });
    } finally {
      await browser.close();
      await first?.stop();
      await second?.stop();
      await dropDatabase();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe.runIf(onPostgres('the PostgreSQL-only tests') && hasChromium)(
  'spec Passkeys 3 (storage shared across instances): two api instances on one PostgreSQL are one relying party',
  () => {
    let one: TestService;
    let two: TestService;
    let key: SigningKey;
    let alice: string;
    let publicBase: string;
    let dataDir: string;
    let dropDatabase: () => Promise<void>;
    let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
    let browser: Browser;
    let page: Page;
    let credentialId: string;

    beforeAll(async () => {
      dataDir = serviceDataDir('passkey-scale');
      const own = await createOwnDatabase(process.env['DATABASE_URL']!);
      dropDatabase = own.drop;
      const shared = await sharedKey();
      key = shared.key;
      // The public origin (what the browser sees, and the RP's one allowed origin) is a proxy in front of
      // instance one; the test addresses each instance directly as a load balancer would pick one.
      const portOne = await freePort();
      proxy = await startTcpProxy('127.0.0.1', portOne);
      publicBase = `http://localhost:${proxy.port}`;
      const env = { DATABASE_URL: own.url, DATA_DIR: dataDir, PUBLIC_URL: publicBase, SIGNING_KEY: JSON.stringify(shared.jwk) };
      one = await startTestService({ ...env, PORT: String(portOne) });
      two = await startTestService({ ...env, PORT: '0' });
      expect(one.url).not.toBe(two.url);
      await seedDemoData(one.database);
      alice = (await demoOf(one)).userId.alice;
      browser = await launchChromium();
      ({ page } = await openAuthenticator(browser, `${publicBase}/login/ott`));
    });
    afterAll(async () => {
      await browser?.close();
      await proxy?.close();
      await one?.stop();
      await two?.stop();
      await dropDatabase?.();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('registration: creation options served by instance one, the new credential verified and stored by instance two; the challenge is then spent on both', async () => {
      const session = new BrowserSession(one.url);
      const authorization = `Bearer ${await bearer(key, one, alice)}`;
      const options = await post(session, `${one.url}/webauthn/register/options`, publicBase, {}, { authorization });
      expect(options.status).toBe(200);
      expect(session.cookies.get('lk_webauthn')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const credential = await create(page, options.json!);
      expect(challengeOf(credential)).toBe(options.json!['challenge']);

      const registered = await post(
        session,
        `${two.url}/webauthn/register`,
        publicBase,
        { response: credential, label: 'Registered across instances' },
        { authorization },
      );
      expect(registered.status).toBe(201);
      expect(registered.json).toMatchObject({ id: credential['id'], label: 'Registered across instances', rpId: 'localhost' });
      credentialId = credential['id'] as string;
      // Which instance did what: one handed out the options and never saw the response; two verified it.
      expect(answered(one, '/webauthn/register/options')).toEqual([200]);
      expect(answered(one, '/webauthn/register')).toEqual([]);
      expect(answered(two, '/webauthn/register/options')).toEqual([]);
      expect(answered(two, '/webauthn/register')).toEqual([201]);

      // The challenge was used once: the same response is refused by instance one (and by two again).
      for (const instance of [one, two]) {
        const replay = await post(session, `${instance.url}/webauthn/register`, publicBase, { response: credential }, { authorization });
        expect(replay.status).toBe(400);
        expect(replay.json).toMatchObject({ statusCode: 400, code: 'PASSKEY_CHALLENGE_INVALID' });
      }
      // Instance one lists the passkey two stored.
      const listed = await postGraphQL(
        one.graphqlUrl,
        { query: '{ me { passkeys { id label } } }' },
        { token: await bearer(key, one, alice) },
      );
      expect(listed.json).toEqual({
        data: { me: { passkeys: [{ id: credentialId, label: 'Registered across instances' }] } },
        extensions: COST_REPORTED,
      });
    });

    it('sign-in: request options served by instance one, the assertion verified by instance two (POST /login/webauthn), through to an ID token with amr swk', async () => {
      expect(credentialId).toBeDefined();
      const session = new BrowserSession(one.url);
      const flow = await authorize(session, one.url, publicBase);
      const options = await post(session, `${one.url}/webauthn/authenticate/options`, publicBase, {});
      expect(options.status).toBe(200);
      const assertion = await get(page, options.json!);
      expect(assertion['id']).toBe(credentialId);
      expect(challengeOf(assertion)).toBe(options.json!['challenge']);

      const before = {
        oneSignIns: answered(one, '/login/webauthn').length,
        twoOptions: answered(two, '/webauthn/authenticate/options').length,
      };
      const signedIn = await post(session, `${two.url}/login/webauthn`, publicBase, { response: assertion });
      expect(signedIn.status).toBe(200);
      expect(signedIn.json).toEqual({ status: 'signed-in', continue: flow.interaction });
      expect(answered(two, '/login/webauthn')).toEqual([200]);
      expect(answered(one, '/login/webauthn')).toHaveLength(before.oneSignIns);
      expect(answered(two, '/webauthn/authenticate/options')).toHaveLength(before.twoOptions);

      // The continuation two issued is honoured by one; the code one issued is redeemed at two.
      const { idToken, accessToken } = await finishSignIn(
        session,
        flow,
        signedIn.json!['continue'] as string,
        publicBase,
        one.url,
        two.url,
      );
      expect(idToken).toMatchObject({
        iss: publicBase,
        aud: 'latchkey-demo',
        sub: alice,
        email: 'alice@acme.test',
        amr: ['swk'],
        acr: 'urn:latchkey:acr:phr',
      });
      const api = await postGraphQL(one.graphqlUrl, { query: '{ me { email } viewer { amr acr } }' }, { token: accessToken });
      expect(api.json).toEqual({
        data: { me: { email: 'alice@acme.test' }, viewer: { amr: ['swk'], acr: 'urn:latchkey:acr:phr' } },
        extensions: COST_REPORTED,
      });
    });

    it('single use across instances: an authentication challenge used once on instance two cannot be replayed on instance one', async () => {
      expect(credentialId).toBeDefined();
      const session = new BrowserSession(one.url);
      const options = await post(session, `${one.url}/webauthn/authenticate/options`, publicBase, {});
      expect(options.status).toBe(200);
      const challenge = options.json!['challenge'] as string;
      const stored = () =>
        one.database.db.select({ id: webauthnChallenges.id }).from(webauthnChallenges).where(eq(webauthnChallenges.challenge, challenge));
      expect(await stored()).toHaveLength(1);
      const assertion = await get(page, options.json!);

      const used = await post(session, `${two.url}/login/webauthn`, publicBase, { response: assertion });
      expect(used.status).toBe(200);
      expect(used.json).toMatchObject({ status: 'signed-in' });
      expect(await stored()).toHaveLength(0);

      // The very same browser (same lk_webauthn binding) replays the same signed assertion on the other instance.
      session.cookies.delete('lk_signin');
      const replayed = await post(session, `${one.url}/login/webauthn`, publicBase, { response: assertion });
      expect(replayed.status).toBe(400);
      expect(replayed.json).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'PASSKEY_CHALLENGE_INVALID' });
      expect(replayed.headers.getSetCookie().join(';')).not.toContain('lk_signin=');
      expect(session.cookies.has('lk_signin')).toBe(false);
      expect(answered(one, '/login/webauthn')).toEqual([400]);
    });
  },
);
