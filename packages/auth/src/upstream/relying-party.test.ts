import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createUpstreamRelyingParty,
  deriveUpstreamRequestKey,
  isAcceptableIssuer,
  openUpstreamRequest,
  sealUpstreamRequest,
  UpstreamError,
  type PendingUpstreamRequest,
  type UpstreamRelyingParty,
} from '../index.js';
import { startUpstreamProvider, type UpstreamProvider } from '../testing/upstream-provider.js';

const REDIRECT_URI = 'http://localhost:4999/login/upstream/callback';

describe('the sealed pending request (the browser keeps it until the callback)', () => {
  const key = deriveUpstreamRequestKey('a server secret');
  const request: PendingUpstreamRequest = {
    purpose: 'link',
    state: 'sssssssssssssssssssssssssssssssssssssssssss',
    nonce: 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn',
    codeVerifier: 'vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv',
    userId: '6f1c1d2e-1111-4222-8333-944455556666',
    expiresAt: Math.floor(Date.now() / 1000) + 600,
  };

  it('opens under the same key, reveals nothing in clear, and is refused when tampered, foreign, junk or expired', () => {
    const sealed = sealUpstreamRequest(key, request);
    expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/);
    for (const secret of [request.state, request.nonce, request.codeVerifier, request.userId!])
      expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain(secret);
    expect(openUpstreamRequest(key, sealed)).toEqual(request);
    expect(sealUpstreamRequest(key, request)).not.toBe(sealed); // a fresh IV every time

    const bytes = Buffer.from(sealed, 'base64url');
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1;
    expect(openUpstreamRequest(key, bytes.toString('base64url'))).toBeNull();
    expect(openUpstreamRequest(deriveUpstreamRequestKey('another secret'), sealed)).toBeNull();
    for (const junk of [undefined, '', 'abc', 'not base64url!', 'A'.repeat(5000)]) expect(openUpstreamRequest(key, junk)).toBeNull();
    expect(openUpstreamRequest(key, sealed, (request.expiresAt + 1) * 1000)).toBeNull();
    // A link without its account is not a request this server sealed.
    expect(openUpstreamRequest(key, sealUpstreamRequest(key, { ...request, userId: 'someone' }))).toBeNull();
  });
});

describe('issuer URLs', () => {
  it('https anywhere; plain http only on localhost or 127.0.0.1; no query, fragment or credentials', () => {
    expect(isAcceptableIssuer('https://accounts.example.com')).toBe(true);
    expect(isAcceptableIssuer('https://example.com/tenant/1')).toBe(true);
    expect(isAcceptableIssuer('http://localhost:3000')).toBe(true);
    expect(isAcceptableIssuer('http://127.0.0.1:3000')).toBe(true);
    for (const bad of [
      'http://accounts.example.com',
      'http://10.0.0.1',
      'ftp://localhost',
      'https://example.com/?a=1',
      'https://example.com/#x',
      'https://u:p@example.com',
      'example.com',
      '',
    ]) {
      expect(isAcceptableIssuer(bad)).toBe(false);
    }
    expect(() =>
      createUpstreamRelyingParty({ issuer: 'http://accounts.example.com', clientId: 'c', clientSecret: 's', redirectUri: REDIRECT_URI }),
    ).toThrow(TypeError);
  });
});

describe('the relying party against a real upstream oidc-provider', () => {
  let upstream: UpstreamProvider;
  let party: UpstreamRelyingParty;

  beforeAll(async () => {
    upstream = await startUpstreamProvider({ redirectUri: REDIRECT_URI, accounts: [{ sub: 'upstream-alice', email: 'alice@acme.test' }] });
    party = createUpstreamRelyingParty({
      issuer: upstream.issuer,
      clientId: upstream.clientId,
      clientSecret: upstream.clientSecret,
      redirectUri: REDIRECT_URI,
    });
  });
  afterAll(() => upstream?.close());

  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => 'resolved',
      (error: unknown) => (error instanceof UpstreamError ? error.code : String(error)),
    );

  it('sends state, nonce and an S256 PKCE challenge, and returns the verified issuer and subject', async () => {
    const { url, request } = await party.start('sign-in');
    const params = new URL(url).searchParams;
    expect(url.startsWith(`${upstream.issuer}/`)).toBe(true);
    expect(Object.fromEntries(params)).toMatchObject({
      client_id: 'latchkey',
      response_type: 'code',
      scope: 'openid email',
      redirect_uri: REDIRECT_URI,
      state: request.state,
      nonce: request.nonce,
      code_challenge_method: 'S256',
    });
    expect(params.get('code_challenge')).not.toBe(request.codeVerifier);
    expect(request.purpose).toBe('sign-in');

    const callback = await upstream.authorize(url, 'upstream-alice');
    expect(callback.startsWith(`${REDIRECT_URI}?`)).toBe(true);
    const identity = await party.finish(new URL(callback).search, request);
    expect(identity).toEqual({ issuer: upstream.issuer, subject: 'upstream-alice', email: 'alice@acme.test' });

    // The same callback again: the code is used up.
    expect(await refusal(party.finish(new URL(callback).search, request))).toBe('UPSTREAM_INVALID_RESPONSE');
  });

  it('refuses a callback of another request (state), a missing code, and reports a cancelled sign-in', async () => {
    const first = await party.start('sign-in');
    const second = await party.start('sign-in');
    const callback = await upstream.authorize(first.url, 'upstream-alice');
    expect(await refusal(party.finish(new URL(callback).search, second.request))).toBe('UPSTREAM_INVALID_RESPONSE');
    // The nonce and PKCE verifier belong to the request too: the right state with another request's nonce fails.
    const fresh = await upstream.authorize((await party.start('sign-in')).url, 'upstream-alice');
    expect(
      await refusal(party.finish(new URL(fresh).search, { ...second.request, state: new URL(fresh).searchParams.get('state')! })),
    ).toBe('UPSTREAM_INVALID_RESPONSE');
    expect(await refusal(party.finish('', first.request))).toBe('UPSTREAM_INVALID_RESPONSE');
    expect(await refusal(party.finish(`?state=${first.request.state}`, first.request))).toBe('UPSTREAM_INVALID_RESPONSE');

    const cancelled = await party.start('sign-in');
    const back = await upstream.cancel(cancelled.url);
    expect(new URL(back).searchParams.get('error')).toBe('access_denied');
    const denied = await party.finish(new URL(back).search, cancelled.request).catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(UpstreamError);
    expect(denied).toMatchObject({ code: 'UPSTREAM_DENIED', upstreamError: 'access_denied' });
  });

  it('a link request carries its account; an unreachable provider is UPSTREAM_UNAVAILABLE (and retried later)', async () => {
    await expect(party.start('link')).rejects.toThrow(TypeError);
    const { request } = await party.start('link', '6f1c1d2e-1111-4222-8333-944455556666');
    expect(request).toMatchObject({ purpose: 'link', userId: '6f1c1d2e-1111-4222-8333-944455556666' });

    const nowhere = createUpstreamRelyingParty({
      issuer: 'http://127.0.0.1:9',
      clientId: 'c',
      clientSecret: 's',
      redirectUri: REDIRECT_URI,
      timeoutSeconds: 2,
    });
    expect(await refusal(nowhere.start('sign-in'))).toBe('UPSTREAM_UNAVAILABLE');
    expect(await refusal(nowhere.start('sign-in'))).toBe('UPSTREAM_UNAVAILABLE');
  });
});
