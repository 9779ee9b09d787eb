import { eq, passkeys, webauthnChallenges } from '@latchkey/db';
import { describe, expect, it } from 'vitest';
import {
  finishPasskeyAuthentication,
  finishPasskeyRegistration,
  listPasskeys,
  randomToken,
  removePasskey,
  startPasskeyRegistration,
  type PasskeyRelyingParty,
} from '../index.js';
import {
  alice,
  assertion,
  bob,
  create,
  database,
  expectRefused,
  hasChromium,
  origin,
  registerPasskey,
  resetAuthenticator,
  rp,
  storedPasskey,
  usePasskeyCeremonies,
} from '../test-support/passkey-ceremonies.js';

// What the verification refuses: another origin or RP ID (spec 2, 4), a counter that went back, a removed passkey or a foreign user handle, and a credential id registered twice.
// The ceremonies (browser, authenticator, database) are set up by test-support/passkey-ceremonies.ts.

usePasskeyCeremonies();

describe.runIf(hasChromium)('passkeys (spec "Passkeys")', () => {
  it('origin mismatch: a relying party whose origins do not include the page origin refuses (spec 2)', async () => {
    const elsewhere: PasskeyRelyingParty = { ...rp, origins: ['https://login.example.test', 'http://localhost:1'] };
    const options = await startPasskeyRegistration(database.db, rp, { userId: alice, userName: 'alice@acme.test', binding: 'session-1' });
    const response = await create(options);
    await expectRefused(
      finishPasskeyRegistration(database.db, elsewhere, { userId: alice, binding: 'session-1', response }),
      'PASSKEY_VERIFICATION_FAILED',
    );
    expect(await listPasskeys(database.db, alice)).toEqual([]);

    await resetAuthenticator();
    const { id } = await registerPasskey(bob);
    const signIn = await assertion('session-1');
    await expectRefused(
      finishPasskeyAuthentication(database.db, elsewhere, { binding: 'session-1', response: signIn }),
      'PASSKEY_VERIFICATION_FAILED',
    );
    expect((await storedPasskey(id))!.lastUsedAt).toBeNull();
  });

  it("a credential registered for RP ID 'localhost' is refused when the server's RP ID differs (spec 4)", async () => {
    const { id } = await registerPasskey(alice);
    const otherRp: PasskeyRelyingParty = { id: 'login.example.test', name: 'Other', origins: [origin] };
    // Unknown to the other RP ID: the lookup is scoped to rp.id.
    await expectRefused(
      finishPasskeyAuthentication(database.db, otherRp, { binding: 'session-1', response: await assertion('session-1') }),
      'PASSKEY_UNKNOWN_CREDENTIAL',
    );
    // Even if the stored row claimed the other RP ID, the signed RP ID hash is localhost's and is refused.
    await database.db.update(passkeys).set({ rpId: 'login.example.test' }).where(eq(passkeys.id, id));
    await expectRefused(
      finishPasskeyAuthentication(database.db, otherRp, { binding: 'session-1', response: await assertion('session-1') }),
      'PASSKEY_VERIFICATION_FAILED',
    );
    // ... and now that the row says another RP ID, localhost does not accept it either.
    await expectRefused(
      finishPasskeyAuthentication(database.db, rp, { binding: 'session-1', response: await assertion('session-1') }),
      'PASSKEY_UNKNOWN_CREDENTIAL',
    );
    expect((await storedPasskey(id))!.lastUsedAt).toBeNull();
  });

  it('counter regression is refused: a stored counter above what the authenticator sends', async () => {
    const { id } = await registerPasskey(alice);
    await database.db.update(passkeys).set({ counter: 1000 }).where(eq(passkeys.id, id));
    const signIn = await assertion('session-1');
    await expectRefused(
      finishPasskeyAuthentication(database.db, rp, { binding: 'session-1', response: signIn }),
      'PASSKEY_COUNTER_REGRESSION',
    );
    const row = (await storedPasskey(id))!;
    expect(row.counter).toBe(1000);
    expect(row.lastUsedAt).toBeNull();
  });

  it('a passkey that was removed, or a user handle that does not match, signs nobody in', async () => {
    const { id } = await registerPasskey(alice);
    const signIn = await assertion('session-1');
    const forged = { ...signIn, response: { ...signIn.response, userHandle: randomToken() } };
    await expectRefused(
      finishPasskeyAuthentication(database.db, rp, { binding: 'session-1', response: forged }),
      'PASSKEY_VERIFICATION_FAILED',
    );
    expect(await removePasskey(database.db, alice, id)).toBe(true);
    await expectRefused(
      finishPasskeyAuthentication(database.db, rp, { binding: 'session-1', response: await assertion('session-1') }),
      'PASSKEY_UNKNOWN_CREDENTIAL',
    );
  });

  it('a credential id is stored once: registering it again is refused', async () => {
    const options = await startPasskeyRegistration(database.db, rp, { userId: alice, userName: 'alice@acme.test', binding: 'session-1' });
    const response = await create(options);
    await finishPasskeyRegistration(database.db, rp, { userId: alice, binding: 'session-1', response });
    // Put the (used) challenge back as if it had been issued again, to reach the credential check.
    await startPasskeyRegistration(database.db, rp, { userId: alice, userName: 'alice@acme.test', binding: 'session-1' });
    await database.db.update(webauthnChallenges).set({ challenge: options.challenge, userHandle: options.user.id });
    await expectRefused(
      finishPasskeyRegistration(database.db, rp, { userId: alice, binding: 'session-1', response }),
      'PASSKEY_ALREADY_REGISTERED',
    );
    expect(await listPasskeys(database.db, alice)).toHaveLength(1);
  });
});
