import { webauthnChallenges } from '@latchkey/db';
import { describe, expect, it } from 'vitest';
import {
  finishPasskeyAuthentication,
  finishPasskeyRegistration,
  listPasskeys,
  startPasskeyAuthentication,
  startPasskeyRegistration,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '../index.js';
import {
  alice,
  assertion,
  bob,
  create,
  database,
  expectRefused,
  get,
  hasChromium,
  registerPasskey,
  resetAuthenticator,
  rp,
  storedPasskey,
  usePasskeyCeremonies,
} from '../test-support/passkey-ceremonies.js';

// Registration and sign-in end to end, and the rules of the challenge: single use (replay, concurrency), bound to one browser, one purpose and one user, five minutes by default.
// The ceremonies (browser, authenticator, database) are set up by test-support/passkey-ceremonies.ts.

usePasskeyCeremonies();

describe.runIf(hasChromium)('passkeys (spec "Passkeys")', () => {
  it('registers a discoverable passkey, then signs in without a username: userId returned, counter and last_used_at updated', async () => {
    const options = await startPasskeyRegistration(database.db, rp, {
      userId: alice,
      userName: 'alice@acme.test',
      displayName: 'Alice',
      binding: 'session-1',
    });
    expect(options.rp).toEqual({ id: 'localhost', name: 'Latchkey test' });
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'preferred' });
    expect(options.excludeCredentials).toEqual([]);
    expect(options.user.name).toBe('alice@acme.test');
    expect(Buffer.from(options.user.id, 'base64url')).toHaveLength(32);
    expect(options.user.id).not.toContain(alice);
    expect(await database.db.select().from(webauthnChallenges)).toHaveLength(1);

    const response = await create(options);
    const created = new Date();
    const summary = await finishPasskeyRegistration(
      database.db,
      rp,
      { userId: alice, binding: 'session-1', response, label: '  Laptop  ' },
      created,
    );
    expect(summary).toMatchObject({ id: response.id, label: 'Laptop', rpId: 'localhost', backedUp: false, lastUsedAt: null });
    expect(summary.createdAt).toEqual(created);
    expect(summary).not.toHaveProperty('publicKey');
    expect(await database.db.select().from(webauthnChallenges)).toHaveLength(0);

    const row = (await storedPasskey(response.id))!;
    expect(row.userId).toBe(alice);
    expect(row.userHandle).toBe(options.user.id);
    expect(row.publicKey).toBeInstanceOf(Uint8Array);
    expect(row.publicKey.length).toBeGreaterThan(30);
    expect(row.rpId).toBe('localhost');
    const registeredCounter = row.counter;

    // Discoverable sign-in: no username, no allowCredentials; the credential names the account.
    const signInOptions = await startPasskeyAuthentication(database.db, rp, { binding: 'session-2' });
    expect(signInOptions.allowCredentials).toEqual([]);
    expect(signInOptions.userVerification).toBe('required');
    const signedIn = await get(signInOptions);
    expect(signedIn.response.userHandle).toBe(options.user.id);
    const usedAt = new Date();
    expect(await finishPasskeyAuthentication(database.db, rp, { binding: 'session-2', response: signedIn }, usedAt)).toEqual({
      userId: alice,
      credentialId: response.id,
    });
    const afterFirst = (await storedPasskey(response.id))!;
    expect(afterFirst.counter).toBeGreaterThan(registeredCounter);
    expect(afterFirst.lastUsedAt).toEqual(usedAt);

    const again = await assertion('session-3');
    expect(await finishPasskeyAuthentication(database.db, rp, { binding: 'session-3', response: again })).toEqual({
      userId: alice,
      credentialId: response.id,
    });
    expect((await storedPasskey(response.id))!.counter).toBeGreaterThan(afterFirst.counter);
    expect(await database.db.select().from(webauthnChallenges)).toHaveLength(0);
  });

  it('a second registration for the account reuses its user handle and excludes its passkeys (the authenticator refuses)', async () => {
    const first = await registerPasskey(alice);
    const options = await startPasskeyRegistration(database.db, rp, { userId: alice, userName: 'alice@acme.test', binding: 'session-1' });
    expect(options.excludeCredentials).toEqual([{ id: first.id, type: 'public-key', transports: first.transports }]);
    expect(options.user.id).toBe((await storedPasskey(first.id))!.userHandle);
    await expect(create(options)).rejects.toThrow(/InvalidStateError|already been registered/);
    // Bob's options list none of Alice's credentials and give him a handle of his own.
    const bobs = await startPasskeyRegistration(database.db, rp, { userId: bob, userName: 'bob@acme.test', binding: 'session-9' });
    expect(bobs.excludeCredentials).toEqual([]);
    expect(bobs.user.id).not.toBe(options.user.id);
  });

  it('challenge replay: the same finish request twice, the second is refused (registration and sign-in)', async () => {
    const options = await startPasskeyRegistration(database.db, rp, { userId: alice, userName: 'alice@acme.test', binding: 'session-1' });
    const response = await create(options);
    await finishPasskeyRegistration(database.db, rp, { userId: alice, binding: 'session-1', response });
    await expectRefused(
      finishPasskeyRegistration(database.db, rp, { userId: alice, binding: 'session-1', response }),
      'PASSKEY_CHALLENGE_INVALID',
    );

    const signIn = await assertion('session-1');
    const counter = (await storedPasskey(response.id))!.counter;
    await finishPasskeyAuthentication(database.db, rp, { binding: 'session-1', response: signIn });
    await expectRefused(
      finishPasskeyAuthentication(database.db, rp, { binding: 'session-1', response: signIn }),
      'PASSKEY_CHALLENGE_INVALID',
    );
    expect((await storedPasskey(response.id))!.counter).toBeGreaterThan(counter);
  });

  it('single use under concurrency: of 8 simultaneous finishes of one sign-in exactly one wins', async () => {
    const { id } = await registerPasskey(alice);
    const signIn = await assertion('session-1');
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => finishPasskeyAuthentication(database.db, rp, { binding: 'session-1', response: signIn })),
    );
    expect(results.filter((r) => r.status === 'fulfilled').map((r) => r.value)).toEqual([{ userId: alice, credentialId: id }]);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'PASSKEY_CHALLENGE_INVALID' });
  });

  it('wrong binding is refused, and the attempt uses the challenge up', async () => {
    const options = await startPasskeyRegistration(database.db, rp, { userId: alice, userName: 'alice@acme.test', binding: 'session-1' });
    const response = await create(options);
    await expectRefused(
      finishPasskeyRegistration(database.db, rp, { userId: alice, binding: 'session-2', response }),
      'PASSKEY_CHALLENGE_INVALID',
    );
    await expectRefused(
      finishPasskeyRegistration(database.db, rp, { userId: alice, binding: 'session-1', response }),
      'PASSKEY_CHALLENGE_INVALID',
    );
    expect(await listPasskeys(database.db, alice)).toEqual([]);

    await resetAuthenticator();
    await registerPasskey(alice);
    const signIn = await assertion('session-1');
    await expectRefused(
      finishPasskeyAuthentication(database.db, rp, { binding: 'session-1x', response: signIn }),
      'PASSKEY_CHALLENGE_INVALID',
    );
    await expectRefused(
      finishPasskeyAuthentication(database.db, rp, { binding: 'session-1', response: signIn }),
      'PASSKEY_CHALLENGE_INVALID',
    );
    // Only a hash of the binding is stored.
    await startPasskeyAuthentication(database.db, rp, { binding: 'session-secret-value' });
    expect(JSON.stringify(await database.db.select().from(webauthnChallenges))).not.toContain('session-secret-value');
  });

  it('a challenge is refused for another purpose or another user', async () => {
    const options = await startPasskeyRegistration(database.db, rp, { userId: alice, userName: 'alice@acme.test', binding: 'session-1' });
    const response = await create(options);
    await expectRefused(
      finishPasskeyRegistration(database.db, rp, { userId: bob, binding: 'session-1', response }),
      'PASSKEY_CHALLENGE_INVALID',
    );
    expect(await listPasskeys(database.db, bob)).toEqual([]);

    // A registration response offered as a sign-in: its registration challenge does not serve for sign-in.
    const other = await startPasskeyRegistration(database.db, rp, { userId: bob, userName: 'bob@acme.test', binding: 'session-1' });
    await resetAuthenticator();
    const bobsRegistration = await create(other);
    await expectRefused(
      finishPasskeyAuthentication(database.db, rp, {
        binding: 'session-1',
        response: bobsRegistration as unknown as AuthenticationResponseJSON,
      }),
      'PASSKEY_CHALLENGE_INVALID',
    );
    // and an authentication challenge does not serve for registration.
    await resetAuthenticator();
    const { id } = await registerPasskey(alice);
    const signIn = await assertion('session-1');
    await expectRefused(
      finishPasskeyRegistration(database.db, rp, {
        userId: alice,
        binding: 'session-1',
        response: signIn as unknown as RegistrationResponseJSON,
      }),
      'PASSKEY_CHALLENGE_INVALID',
    );
    expect((await listPasskeys(database.db, alice)).map((p) => p.id)).toEqual([id]);
  });

  it('an expired challenge is refused (five minutes by default)', async () => {
    await registerPasskey(alice);
    const tenMinutesAgo = new Date(Date.now() - 10 * 60_000);
    const signIn = await assertion('session-1', tenMinutesAgo);
    const [row] = await database.db.select().from(webauthnChallenges);
    expect(row!.expiresAt.getTime() - row!.createdAt.getTime()).toBe(300_000);
    await expectRefused(
      finishPasskeyAuthentication(database.db, rp, { binding: 'session-1', response: signIn }),
      'PASSKEY_CHALLENGE_INVALID',
    );

    const options = await startPasskeyRegistration(
      database.db,
      rp,
      { userId: bob, userName: 'bob@acme.test', binding: 'session-1', ttlSeconds: 60 },
      tenMinutesAgo,
    );
    const response = await create(options);
    await expectRefused(
      finishPasskeyRegistration(database.db, rp, { userId: bob, binding: 'session-1', response }),
      'PASSKEY_CHALLENGE_INVALID',
    );
    expect(await listPasskeys(database.db, bob)).toEqual([]);
  });
});
