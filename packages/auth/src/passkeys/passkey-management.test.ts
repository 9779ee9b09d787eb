import { eq, users, webauthnChallenges } from '@latchkey/db';
import { describe, expect, it } from 'vitest';
import {
  finishPasskeyAuthentication,
  listPasskeys,
  purgeExpiredWebAuthnChallenges,
  removePasskey,
  renamePasskey,
  startPasskeyAuthentication,
  startPasskeyRegistration,
  type PublicKeyCredentialRequestOptionsJSON,
} from '../index.js';
import {
  alice,
  bob,
  database,
  expectRefused,
  get,
  hasChromium,
  origin,
  registerPasskey,
  resetAuthenticator,
  rp,
  storedPasskey,
  usePasskeyCeremonies,
} from '../test-support/passkey-ceremonies.js';

// Listing, renaming and removing passkeys (scoped to their owner), sign-in options that reveal no account, the purge of expired challenges, and configuration mistakes.
// The ceremonies (browser, authenticator, database) are set up by test-support/passkey-ceremonies.ts.

usePasskeyCeremonies();

describe.runIf(hasChromium)('passkeys (spec "Passkeys")', () => {
  it("list, rename and remove are scoped to the owner: someone else's passkey is not found", async () => {
    const alices = await registerPasskey(alice, 'session-1', 'Laptop');
    await resetAuthenticator();
    const bobs = await registerPasskey(bob, 'session-2');

    expect((await listPasskeys(database.db, alice)).map((p) => [p.id, p.label])).toEqual([[alices.id, 'Laptop']]);
    expect((await listPasskeys(database.db, bob)).map((p) => [p.id, p.label])).toEqual([[bobs.id, null]]);

    expect(await renamePasskey(database.db, bob, alices.id, 'Mine now')).toBeNull();
    expect(await removePasskey(database.db, bob, alices.id)).toBe(false);
    expect(await renamePasskey(database.db, alice, 'no-such-id', 'Phone')).toBeNull();
    expect((await storedPasskey(alices.id))!.label).toBe('Laptop');

    for (const bad of ['', '   ', 'x'.repeat(65), 'tab\there'])
      await expectRefused(renamePasskey(database.db, alice, alices.id, bad), 'PASSKEY_LABEL_INVALID');
    const sixtyFour = '🔑'.repeat(64);
    expect(await renamePasskey(database.db, alice, alices.id, sixtyFour)).toMatchObject({ id: alices.id, label: sixtyFour });
    expect(await renamePasskey(database.db, alice, alices.id, ' Work laptop ')).toMatchObject({ id: alices.id, label: 'Work laptop' });

    expect(await removePasskey(database.db, alice, alices.id)).toBe(true);
    expect(await removePasskey(database.db, alice, alices.id)).toBe(false);
    expect(await listPasskeys(database.db, alice)).toEqual([]);
    expect(await listPasskeys(database.db, bob)).toHaveLength(1);
    // Deleting the account deletes its passkeys.
    await database.db.delete(users).where(eq(users.id, bob));
    expect(await storedPasskey(bobs.id)).toBeUndefined();
  });

  it('sign-in options for an unknown username and a known one have the same shape and no allowCredentials', async () => {
    const { id } = await registerPasskey(alice);
    const known = await startPasskeyAuthentication(database.db, rp, { binding: 's', username: 'alice@acme.test' });
    const unknown = await startPasskeyAuthentication(database.db, rp, { binding: 's', username: 'nobody@acme.test' });
    const none = await startPasskeyAuthentication(database.db, rp, { binding: 's' });
    const shape = (o: PublicKeyCredentialRequestOptionsJSON) => JSON.parse(JSON.stringify({ ...o, challenge: '<challenge>' })) as unknown;
    expect(shape(known)).toEqual(shape(unknown));
    expect(shape(known)).toEqual(shape(none));
    expect(known.allowCredentials).toEqual([]);
    expect(JSON.stringify(known)).not.toContain(id);
    expect(new Set([known.challenge, unknown.challenge, none.challenge]).size).toBe(3);
    const rows = await database.db.select().from(webauthnChallenges);
    expect(rows.map((r) => [r.purpose, r.userId])).toEqual([
      ['authentication', null],
      ['authentication', null],
      ['authentication', null],
    ]);
    // The known username's sign-in still works with her passkey.
    expect(await finishPasskeyAuthentication(database.db, rp, { binding: 's', response: await get(known) })).toEqual({
      userId: alice,
      credentialId: id,
    });
  });

  it('expired challenges are purged; live ones stay', async () => {
    const now = new Date('2026-11-22T12:00:00Z');
    await startPasskeyAuthentication(database.db, rp, { binding: 'a', ttlSeconds: 10 }, now);
    await startPasskeyRegistration(database.db, rp, { userId: alice, userName: 'alice@acme.test', binding: 'b', ttlSeconds: 30 }, now);
    await startPasskeyAuthentication(database.db, rp, { binding: 'c', ttlSeconds: 600 }, now);
    expect(await purgeExpiredWebAuthnChallenges(database.db, new Date('2026-11-22T12:05:00Z'))).toBe(2);
    const left = await database.db.select({ expiresAt: webauthnChallenges.expiresAt }).from(webauthnChallenges);
    expect(left).toEqual([{ expiresAt: new Date('2026-11-22T12:10:00Z') }]);
  });

  it('configuration mistakes are programming errors', async () => {
    await expect(startPasskeyAuthentication(database.db, { ...rp, origins: [] }, { binding: 's' })).rejects.toThrow(TypeError);
    await expect(startPasskeyAuthentication(database.db, { ...rp, origins: [`${origin}/`] }, { binding: 's' })).rejects.toThrow(TypeError);
    await expect(startPasskeyAuthentication(database.db, { ...rp, id: 'localhost:3000' }, { binding: 's' })).rejects.toThrow(TypeError);
    await expect(startPasskeyAuthentication(database.db, rp, { binding: '' })).rejects.toThrow(TypeError);
    for (const ttlSeconds of [0, 1.5, 601])
      await expect(startPasskeyAuthentication(database.db, rp, { binding: 's', ttlSeconds })).rejects.toThrow(RangeError);
    expect(await database.db.select().from(webauthnChallenges)).toHaveLength(0);
  });
});
