import { webcrypto } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, exportJWK, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, signInAtProvider } from './support/chromium.js';
import { COST_REPORTED } from './support/cost.js';
import { confirmUserCode, DEVICE_GRANT, deviceSignedIn } from './support/device.js';
import type { outboxOf } from './support/outbox.js';
import {
  authorizationRequest,
  discover,
  type RelyingPartyServer,
  registeredAt,
  startProviderFor,
  startRelyingParty,
} from './support/relying-party.js';
import { postGraphQL, type TestService } from './support/service.js';

const SECRET = 'discovery-walk-client-secret-0123456789abcdef';
type Keys = { privateKey: webcrypto.CryptoKey; publicKey: webcrypto.CryptoKey };
const subtle = webcrypto.subtle;

/** A signing key pair for each JWS algorithm a client may sign with (client assertions, DPoP proofs). */
async function keyPairFor(alg: string): Promise<Keys> {
  const algorithms: Record<string, RsaHashedKeyGenParams | EcKeyGenParams | { name: string }> = {
    RS256: { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    PS256: { name: 'RSA-PSS', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    ES256: { name: 'ECDSA', namedCurve: 'P-256' },
    ES384: { name: 'ECDSA', namedCurve: 'P-384' },
    Ed25519: { name: 'Ed25519' },
    EdDSA: { name: 'Ed25519' },
  };
  const algorithm = algorithms[alg];
  if (!algorithm) throw new Error(`no key type for ${alg}`);
  return (await subtle.generateKey(algorithm as never, true, ['sign', 'verify'])) as Keys;
}
/** The `alg` header is the algorithm's name (EdDSA and Ed25519 sign alike with an Ed25519 key). */
const signingAs = (alg: string) => ({ [oidc.modifyAssertion]: (header: Record<string, unknown>) => void (header['alg'] = alg) });

describe.runIf(hasChromium)('discovery advertises only what works: every endpoint and *_supported value is proven by a client call', () => {
  let service: TestService;
  let base: string;
  let browser: Browser;
  let app: RelyingPartyServer;
  let outbox: ReturnType<typeof outboxOf>;
  let signedIn: BrowserContext;
  let page: Page;
  let discovery: Record<string, unknown>;
  let walker: oidc.Configuration;
  let publicWalker: oidc.Configuration;
  const assertionKeys = new Map<string, Keys>();

  beforeAll(async () => {
    app = await startRelyingParty();
    for (const alg of ['RS256', 'PS256', 'ES256', 'Ed25519', 'EdDSA']) assertionKeys.set(alg, await keyPairFor(alg));
    const jwks = await Promise.all(
      [...assertionKeys].map(async ([alg, { publicKey }]) => ({ ...(await exportJWK(publicKey)), kid: alg, use: 'sig' })),
    );
    const registered = (client_id: string, client: Record<string, unknown>) => registeredAt(app, { client_id, ...client });
    const clients = [
      registered('walker', {
        client_secret: SECRET,
        token_endpoint_auth_method: 'client_secret_basic',
        backchannel_logout_uri: `${app.origin}/backchannel`,
        backchannel_logout_session_required: true,
      }),
      registered('walker-post', { client_secret: SECRET, token_endpoint_auth_method: 'client_secret_post' }),
      registered('walker-hmac', { client_secret: SECRET, token_endpoint_auth_method: 'client_secret_jwt' }),
      registered('walker-keys', { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: jwks } }),
      registered('walker-public', { token_endpoint_auth_method: 'none' }),
    ];
    ({ service, base, outbox } = await startProviderFor(clients));
    discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    walker = await discover(base, 'walker', oidc.ClientSecretBasic(SECRET));
    publicWalker = await discover(base, 'walker-public');
    browser = await launchChromium();
    // One browser signed in once: every later authorization request completes from its session.
    signedIn = await browser.newContext();
    page = await signedIn.newPage();
    const first = await authorizationRequest(walker, { redirect_uri: `${app.origin}/cb` });
    await page.goto(first.url.href);
    await signInAtProvider(page, outbox, 'alice@acme.test', 'code');
    await oidc.authorizationCodeGrant(walker, await app.callbackFor(first.checks.expectedState), first.checks);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await app?.close();
  });

  /** An authorization request answered from the signed-in browser's session, and its code exchanged. */
  async function silently(
    config: oidc.Configuration,
    parameters: Record<string, string> = {},
    options: { par?: boolean; dpop?: oidc.DPoPHandle } = {},
  ) {
    const request = await authorizationRequest(config, { redirect_uri: `${app.origin}/cb`, ...parameters }, options);
    await page.goto(request.url.href);
    // The fragment never reaches the application's server: its page reads it from the address.
    const callback =
      parameters['response_mode'] === 'fragment'
        ? new URL(page.url().replace('#', '?'))
        : await app.callbackFor(request.checks.expectedState);
    const url = callback instanceof URL ? callback : new URL(callback.url);
    const tokens = await oidc.authorizationCodeGrant(
      config,
      callback,
      request.checks,
      undefined,
      options.dpop ? { DPoP: options.dpop } : {},
    );
    return { tokens, url, method: callback instanceof URL ? 'GET' : callback.method };
  }

  /** Authenticated as `config`'s client: a bad grant is `invalid_grant` (a failed authentication would be `invalid_client`). */
  const authenticates = (config: oidc.Configuration, options: { DPoP?: oidc.DPoPHandle } = {}) =>
    expect(oidc.refreshTokenGrant(config, 'not-a-refresh-token', undefined, options)).rejects.toMatchObject({ error: 'invalid_grant' });

  async function signOutElsewhere(): Promise<{ sid: unknown }> {
    const context = await browser.newContext();
    const other = await context.newPage();
    const request = await authorizationRequest(walker, { redirect_uri: `${app.origin}/cb` });
    await other.goto(request.url.href);
    await signInAtProvider(other, outbox, 'bob@acme.test', 'code');
    const tokens = await oidc.authorizationCodeGrant(walker, await app.callbackFor(request.checks.expectedState), request.checks);
    const before = app.logoutTokens.length;
    await other.goto(
      oidc.buildEndSessionUrl(walker, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: `${app.origin}/signed-out` }).href,
    );
    await other.getByRole('button', { name: 'Sign out' }).click();
    await other.waitForURL(`${app.origin}/signed-out`);
    await expect.poll(() => app.logoutTokens.length).toBe(before + 1);
    expect((await postGraphQL(`${base}/graphql`, { query: '{ me { email } }' }, { token: tokens.access_token })).status).toBe(401);
    await context.close();
    return { sid: tokens.claims()!['sid'] };
  }

  it('every advertised key has a proof here, and every proof passes', async () => {
    const list = (value: unknown) => value as string[];
    const proofs: Record<string, (value: unknown) => Promise<void>> = {
      issuer: async (value) => expect(value).toBe(base),
      authorization_endpoint: async (value) => expect((await silently(walker)).url.href.startsWith(`${app.origin}/cb?`)).toBe(value !== ''),
      token_endpoint: async () => expect((await silently(walker)).tokens.token_type).toBe('bearer'),
      userinfo_endpoint: async () => {
        const { tokens } = await silently(walker);
        expect(await oidc.fetchUserInfo(walker, tokens.access_token, tokens.claims()!.sub)).toMatchObject({ email: 'alice@acme.test' });
      },
      jwks_uri: async (value) => {
        const keys = createRemoteJWKSet(new URL(String(value)));
        const { tokens } = await silently(walker);
        await jwtVerify(tokens.id_token!, keys, { issuer: base, audience: 'walker' });
        await jwtVerify(tokens.access_token, keys, { issuer: base, audience: service.config.tokens.audience, typ: 'at+jwt' });
      },
      end_session_endpoint: async () => void (await signOutElsewhere()),
      backchannel_logout_supported: async (value) => {
        expect(value).toBe(true);
        const { sid } = await signOutElsewhere();
        expect(decodeJwt(app.logoutTokens.at(-1)!)).toMatchObject({ aud: 'walker', sid });
      },
      backchannel_logout_session_supported: async (value) => {
        expect(value).toBe(true);
        expect(decodeJwt(app.logoutTokens.at(-1)!)['sid']).toEqual(expect.any(String));
      },
      revocation_endpoint: async () => {
        const { tokens } = await silently(walker);
        await oidc.tokenRevocation(walker, tokens.refresh_token!);
        await expect(oidc.refreshTokenGrant(walker, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      },
      introspection_endpoint: async () => {
        const { tokens } = await silently(walker);
        expect(await oidc.tokenIntrospection(walker, tokens.access_token)).toMatchObject({ active: true, client_id: 'walker' });
      },
      device_authorization_endpoint: async (value) => {
        // The command line's client (registered by default) asks; the signed-in browser confirms the code.
        const cli = await discover(base, 'latchkey-cli');
        const started = await oidc.initiateDeviceAuthorization(cli, { scope: 'openid' });
        expect(started.verification_uri).toBe(`${String(value).replace(/\/auth$/, '')}`);
        const polling = oidc.pollDeviceAuthorizationGrant(cli, started);
        polling.catch(() => {});
        await page.goto(started.verification_uri_complete!);
        await confirmUserCode(page, started.user_code);
        await deviceSignedIn(page);
        expect(decodeJwt((await polling).access_token)).toMatchObject({ client_id: 'latchkey-cli', amr: expect.any(Array) });
      },
      pushed_authorization_request_endpoint: async () => {
        const { tokens, url } = await silently(walker, {}, { par: true });
        expect(url.searchParams.get('code')).toBeTruthy();
        expect(tokens.access_token).toBeTruthy();
      },
      response_types_supported: async (value) => {
        expect(value).toEqual(['code']);
        expect((await silently(walker, { response_type: 'code' })).url.searchParams.has('code')).toBe(true);
      },
      response_modes_supported: async (value) => {
        for (const mode of list(value)) {
          const { tokens, method } = await silently(walker, { response_mode: mode });
          expect([mode, method, tokens.token_type]).toEqual([mode, mode === 'form_post' ? 'POST' : 'GET', 'bearer']);
        }
      },
      grant_types_supported: async (value) => {
        // The device grant is proven by device_authorization_endpoint's proof.
        expect(list(value).sort()).toEqual(['authorization_code', 'refresh_token', DEVICE_GRANT]);
        const { tokens } = await silently(walker);
        expect((await oidc.refreshTokenGrant(walker, tokens.refresh_token!)).access_token).toBeTruthy();
      },
      scopes_supported: async (value) => {
        const { tokens } = await silently(walker, { scope: list(value).join(' '), prompt: 'consent' });
        expect(tokens.id_token).toBeTruthy(); // openid
        expect(String(decodeJwt(tokens.access_token)['scope']).split(' ')).toContain('api');
        expect(await oidc.tokenIntrospection(walker, tokens.refresh_token!)).toMatchObject({
          scope: expect.stringContaining('offline_access'),
        });
        expect(await oidc.fetchUserInfo(walker, tokens.access_token, tokens.claims()!.sub)).toMatchObject({
          email: 'alice@acme.test', // email
          name: 'Alice', // profile
        });
      },
      claims_supported: async (value) => {
        const { tokens } = await silently(walker, { scope: 'openid email profile api' });
        const claims = { ...tokens.claims(), ...(await oidc.fetchUserInfo(walker, tokens.access_token, tokens.claims()!.sub)) };
        expect(list(value).filter((claim) => !(claim in claims))).toEqual([]);
      },
      claim_types_supported: async (value) => {
        expect(value).toEqual(['normal']);
        const { tokens } = await silently(walker);
        expect(tokens.claims()).not.toHaveProperty('_claim_names');
      },
      claims_parameter_supported: async (value) => expect(value).toBe(false),
      request_uri_parameter_supported: async (value) => expect(value).toBe(false),
      code_challenge_methods_supported: async (value) => {
        expect(value).toEqual(['S256']);
        const plain = oidc.buildAuthorizationUrl(walker, {
          redirect_uri: `${app.origin}/cb`,
          scope: 'openid',
          code_challenge: 'x'.repeat(43),
          code_challenge_method: 'plain',
        });
        const refused = await fetch(plain, { redirect: 'manual' });
        expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
      },
      subject_types_supported: async (value) => {
        expect(value).toEqual(['public']);
        expect((await silently(publicWalker)).tokens.claims()!.sub).toBe((await silently(walker)).tokens.claims()!.sub);
      },
      token_endpoint_auth_methods_supported: async (value) => {
        const byMethod: Record<string, () => Promise<oidc.Configuration>> = {
          client_secret_basic: async () => walker,
          client_secret_post: () => discover(base, 'walker-post', oidc.ClientSecretPost(SECRET)),
          client_secret_jwt: () => discover(base, 'walker-hmac', oidc.ClientSecretJwt(SECRET)),
          private_key_jwt: () =>
            discover(base, 'walker-keys', oidc.PrivateKeyJwt({ key: assertionKeys.get('ES256')!.privateKey, kid: 'ES256' })),
          none: async () => publicWalker,
        };
        for (const method of list(value)) await authenticates(await byMethod[method]!());
        const impostor = await discover(base, 'walker', oidc.ClientSecretBasic(`${SECRET}-wrong`));
        await expect(oidc.refreshTokenGrant(impostor, 'not-a-refresh-token')).rejects.toMatchObject({ status: 401 });
      },
      token_endpoint_auth_signing_alg_values_supported: async (value) => {
        for (const alg of list(value)) {
          const auth =
            alg === 'HS256'
              ? oidc.ClientSecretJwt(SECRET)
              : oidc.PrivateKeyJwt({ key: assertionKeys.get(alg)!.privateKey, kid: alg }, signingAs(alg));
          await authenticates(await discover(base, alg === 'HS256' ? 'walker-hmac' : 'walker-keys', auth));
        }
      },
      id_token_signing_alg_values_supported: async (value) => {
        const { tokens } = await silently(walker);
        expect(value).toEqual([decodeProtectedHeader(tokens.id_token!).alg]);
      },
      dpop_signing_alg_values_supported: async (value) => {
        for (const alg of list(value)) {
          const { privateKey, publicKey } = await keyPairFor(alg);
          const dpop = oidc.getDPoPHandle(publicWalker, { privateKey, publicKey }, signingAs(alg));
          const { tokens } = await silently(publicWalker, {}, { dpop });
          const answer = await oidc.fetchProtectedResource(
            publicWalker,
            tokens.access_token,
            new URL(`${base}/graphql`),
            'POST',
            JSON.stringify({ query: '{ me { email } }' }),
            new Headers({ 'content-type': 'application/json' }),
            { DPoP: dpop },
          );
          expect([alg, tokens.token_type, await answer.json()]).toEqual([
            alg,
            'dpop',
            { data: { me: { email: 'alice@acme.test' } }, extensions: COST_REPORTED },
          ]);
        }
      },
      authorization_response_iss_parameter_supported: async (value) => {
        expect(value).toBe(true);
        expect((await silently(walker)).url.searchParams.get('iss')).toBe(base);
      },
      acr_values_supported: async (value) => {
        const [weakest, ...stronger] = list(value);
        expect((await silently(walker, { acr_values: weakest! })).tokens.claims()!['acr']).toBe(weakest);
        // A stronger level than the session's is asked for, never granted on the weaker sign-in.
        for (const acr of stronger) {
          const request = await authorizationRequest(walker, { redirect_uri: `${app.origin}/cb`, acr_values: acr });
          await page.goto(request.url.href);
          await page.waitForURL(/\/login\/factors/);
          expect(await page.locator('main').textContent()).toContain('The application asks for a stronger sign-in.');
        }
      },
    };

    expect(Object.keys(discovery).filter((key) => !(key in proofs))).toEqual([]);
    const failed: string[] = [];
    for (const [key, prove] of Object.entries(proofs)) {
      if (!(key in discovery)) continue;
      await prove(discovery[key]).catch((error: unknown) => failed.push(`${key}: ${String((error as Error)?.message ?? error)}`));
    }
    expect(failed).toEqual([]);
  }, 120_000);
});
