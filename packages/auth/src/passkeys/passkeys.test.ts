import { needsTool } from '@latchkey/db/testing';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { eq, passkeys, users, webauthnChallenges, type DatabaseHandle } from '@latchkey/db';
import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  finishPasskeyAuthentication,
  finishPasskeyRegistration,
  listPasskeys,
  PASSKEY_ERRORS,
  PasskeyError,
  purgeExpiredWebAuthnChallenges,
  removePasskey,
  renamePasskey,
  startPasskeyAuthentication,
  startPasskeyRegistration,
  type AuthenticationResponseJSON,
  type PasskeyErrorCode,
  type PasskeyRelyingParty,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '../index.js';
import { openOwnDatabase } from '../test-support/own-database.js';

// Real WebAuthn ceremonies: Debian's Chromium (never a downloaded browser) with a CTAP2 virtual
// authenticator attached over CDP, on a page served from 127.0.0.1 and opened as http://localhost:PORT
// (an IP address is not a valid RP ID; http://localhost is a secure context).
const CHROMIUM = '/usr/bin/chromium';
// Real ceremonies need Debian's Chromium; CI installs it (and fails without it). Elsewhere the run lists the skip.
const hasChromium = needsTool('chromium', existsSync(CHROMIUM), 'the passkey ceremonies of packages/auth (apt-get install chromium)');
const BROWSER_BUNDLE = fileURLToPath(new URL('../../node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js', import.meta.url));
const PAGE = `<!doctype html><meta charset="utf-8"><title>passkeys</title><script src="/simplewebauthn-browser.js"></script>`;

// The real database: PostgreSQL (a database of its own) when DATABASE_URL is set, else PGlite on disk.
let database: DatabaseHandle;
let cleanup: () => Promise<void>;
let server: Server;
let browser: Browser;
let page: Page;
let cdp: CDPSession;
let authenticatorId: string | undefined;
let origin: string;
let rp: PasskeyRelyingParty;

beforeAll(async () => {
  ({ database, close: cleanup } = await openOwnDatabase('passkeys'));

  const bundle = readFileSync(BROWSER_BUNDLE);
  server = createServer((req, res) => {
    if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    else if (req.url === '/simplewebauthn-browser.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  rp = { id: 'localhost', name: 'Latchkey test', origins: [origin] };

  if (!hasChromium) return;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage();
  await page.goto(`${origin}/`);
  cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await cleanup?.();
});

let alice: string;
let bob: string;

beforeEach(async () => {
  await database.db.delete(webauthnChallenges);
  await database.db.delete(passkeys);
  await database.db.delete(users);
  [{ id: alice }, { id: bob }] = (await database.db
    .insert(users)
    .values([{ email: 'alice@acme.test' }, { email: 'bob@acme.test' }])
    .returning({ id: users.id })) as [{ id: string }, { id: string }];
  await resetAuthenticator();
});

/**
 * A fresh, empty authenticator: tests keep at most one discoverable credential on it before a sign-in, so
 * that which credential answers is never the browser's choice.
 */
async function resetAuthenticator(): Promise<void> {
  if (authenticatorId) await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
  ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  }));
}

interface BrowserApi {
  startRegistration(options: { optionsJSON: PublicKeyCredentialCreationOptionsJSON }): Promise<RegistrationResponseJSON>;
  startAuthentication(options: { optionsJSON: PublicKeyCredentialRequestOptionsJSON }): Promise<AuthenticationResponseJSON>;
}

/** navigator.credentials.create() in the page, through @simplewebauthn/browser. */
function create(optionsJSON: PublicKeyCredentialCreationOptionsJSON): Promise<RegistrationResponseJSON> {
  return page.evaluate(
    (o) => (globalThis as unknown as { SimpleWebAuthnBrowser: BrowserApi }).SimpleWebAuthnBrowser.startRegistration({ optionsJSON: o }),
    optionsJSON,
  );
}

/** navigator.credentials.get() in the page, through @simplewebauthn/browser. */
function get(optionsJSON: PublicKeyCredentialRequestOptionsJSON): Promise<AuthenticationResponseJSON> {
  return page.evaluate(
    (o) => (globalThis as unknown as { SimpleWebAuthnBrowser: BrowserApi }).SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: o }),
    optionsJSON,
  );
}

async function registerPasskey(userId: string, binding = 'session-1', label?: string) {
  const options = await startPasskeyRegistration(database.db, rp, {
    userId,
    userName: userId === alice ? 'alice@acme.test' : 'bob@acme.test',
    binding,
  });
  const response = await create(options);
  return finishPasskeyRegistration(database.db, rp, { userId, binding, response, ...(label === undefined ? {} : { label }) });
}

/** A signed assertion from the page for a fresh authentication challenge bound to `binding`. */
async function assertion(binding = 'session-1', now?: Date): Promise<AuthenticationResponseJSON> {
  const options = await startPasskeyAuthentication(database.db, rp, { binding }, now);
  return get(options);
}

async function expectRefused(promise: Promise<unknown>, code: PasskeyErrorCode): Promise<void> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PasskeyError);
  expect(error).toMatchObject({ code, message: PASSKEY_ERRORS[code] });
}

async function storedPasskey(id: string) {
  const [row] = await database.db.select().from(passkeys).where(eq(passkeys.id, id));
  return row;
}

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
    const forged = { ...signIn, response: { ...signIn.response, userHandle: randomBytes(32).toString('base64url') } };
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
