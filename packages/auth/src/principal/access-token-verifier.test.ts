import { describe, expect, it } from 'vitest';
import { tokenIssuer } from '../test-support/token-issuer.js';
import { createCallerResolution } from './access-token-verifier.js';

// Spec Authentication 1 and 5: every token's signature is verified, once per operation; the cache only
// spares repeating a check that already succeeded, and never outlives the token.
const setup = tokenIssuer;

describe('access token verifier', () => {
  it('a cache hit answers synchronously with the same caller', async () => {
    const { verifier, token } = await setup();
    const header = `Bearer ${await token()}`;
    const first = await verifier.verifyAuthorization(header);
    const second = verifier.verifyAuthorization(header);
    expect(second).not.toBeInstanceOf(Promise);
    expect(second).toEqual(first);
    expect(first).toMatchObject({ ok: true, caller: { subject: 'alice' } });
  });

  it('concurrent first uses of one token share one signature check', async () => {
    const { verifier, token } = await setup();
    const header = `Bearer ${await token()}`;
    const results = await Promise.all(Array.from({ length: 20 }, () => verifier.verifyAuthorization(header)));
    expect(results.every((result) => result?.ok)).toBe(true);
    expect(verifier.cacheEntries).toBe(1);
  });

  it('a cached token is refused once it expires', async () => {
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const { verifier, token } = await setup(() => clock);
    const header = `Bearer ${await token(10)}`;
    expect((await verifier.verifyAuthorization(header))?.ok).toBe(true);
    clock += 11_000;
    expect(await verifier.verifyAuthorization(header)).toEqual({ ok: false, rejection: 'expired' });
  });

  it('no header is no credential; other schemes and garbage are refused, not ignored', async () => {
    const { verifier } = await setup();
    expect(verifier.verifyAuthorization(undefined)).toBeUndefined();
    expect(verifier.verifyAuthorization('')).toBeUndefined();
    for (const header of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer not-a-jwt', `Bearer ${'a'.repeat(9000)}.b.c`]) {
      expect(await verifier.verifyAuthorization(header)).toEqual({ ok: false, rejection: 'malformed' });
    }
  });
});

// Spec Authentication 2 and 5: an operation's caller is resolved once, from the credential it presents; a guest is
// null, and a refused credential is a guest that is told so.
async function resolutionSetup() {
  const { verifier, token } = await tokenIssuer();
  const callers = createCallerResolution<{ authorization?: string }>({ verifier, authorizationOf: (context) => context.authorization });
  return { callers, token: await token() };
}

describe('caller resolution (generic-auth resolveUserFn)', () => {
  it('Authentication 2: a verified bearer token is the caller; nothing presented is a guest, not a refusal', async () => {
    const { callers, token } = await resolutionSetup();
    const signedIn = { authorization: `Bearer ${token}` };
    expect(await callers.resolveUserFn(signedIn)).toMatchObject({ subject: 'alice' });
    expect(callers.challengeOf(signedIn)).toBeUndefined();
    const guest = {};
    expect(await callers.resolveUserFn(guest)).toBeNull();
    expect(callers.challengeOf(guest)).toBeUndefined();
  });

  it('Authentication 5: a credential that does not verify makes a guest whose refusal says so', async () => {
    const { callers, token } = await resolutionSetup();
    // One character of the signature's middle changed (its last characters may carry only padding bits).
    const at = token.lastIndexOf('.') + 10;
    const tampered = { authorization: `Bearer ${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}` };
    expect(await callers.resolveUserFn(tampered)).toBeNull();
    expect(callers.challengeOf(tampered)).toBe('Bearer error="invalid_token"');
  });

  it('a cached token resolves synchronously (the hot path allocates no promise)', async () => {
    const { callers, token } = await resolutionSetup();
    const context = { authorization: `Bearer ${token}` };
    await callers.resolveUserFn(context);
    expect(callers.resolveUserFn({ ...context })).not.toBeInstanceOf(Promise);
  });
});
