import { describe, expect, it } from 'vitest';
import { tokenIssuer } from '../test-support/token-issuer.js';
import { createCallerResolution } from './caller.js';

// Spec Authentication 2 and 5: an operation's caller is resolved once, from the credential it presents; a guest is
// null, and a refused credential is a guest that is told so.
async function setup() {
  const { verifier, token } = await tokenIssuer();
  const callers = createCallerResolution<{ authorization?: string }>({ verifier, authorizationOf: (context) => context.authorization });
  return { callers, token: await token() };
}

describe('caller resolution (generic-auth resolveUserFn)', () => {
  it('Authentication 2: a verified bearer token is the caller; nothing presented is a guest, not a refusal', async () => {
    const { callers, token } = await setup();
    const signedIn = { authorization: `Bearer ${token}` };
    expect(await callers.resolveUserFn(signedIn)).toMatchObject({ subject: 'alice' });
    expect(callers.challengeOf(signedIn)).toBeUndefined();
    const guest = {};
    expect(await callers.resolveUserFn(guest)).toBeNull();
    expect(callers.challengeOf(guest)).toBeUndefined();
  });

  it('Authentication 5: a credential that does not verify makes a guest whose refusal says so', async () => {
    const { callers, token } = await setup();
    // One character of the signature's middle changed (its last characters may carry only padding bits).
    const at = token.lastIndexOf('.') + 10;
    const tampered = { authorization: `Bearer ${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}` };
    expect(await callers.resolveUserFn(tampered)).toBeNull();
    expect(callers.challengeOf(tampered)).toBe('Bearer error="invalid_token"');
  });

  it('a cached token resolves synchronously (the hot path allocates no promise)', async () => {
    const { callers, token } = await setup();
    const context = { authorization: `Bearer ${token}` };
    await callers.resolveUserFn(context);
    expect(callers.resolveUserFn({ ...context })).not.toBeInstanceOf(Promise);
  });
});
