import { runsHere } from '@latchkey/db/testing';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { eq, passkeys, users, webauthnChallenges } from '@latchkey/db';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../testing/chromium.js';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import {
  finishPasskeyRegistration,
  PASSKEY_ERRORS,
  PasskeyError,
  startPasskeyAuthentication,
  startPasskeyRegistration,
  type AuthenticationResponseJSON,
  type PasskeyErrorCode,
  type PasskeyRelyingParty,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '../index.js';
import { database, useOwnDatabase } from './own-database.js';

/**
 * Real WebAuthn ceremonies for the passkey suites: Debian's Chromium (never a downloaded browser) with a CTAP2
 * virtual authenticator attached over CDP, on a page served from 127.0.0.1 and opened as http://localhost:PORT
 * (an IP address is not a valid RP ID; http://localhost is a secure context), against the real database:
 * PostgreSQL (a database of its own) when DATABASE_URL is set, else PGlite on disk.
 */

// Real ceremonies need Debian's Chromium; CI installs it (and fails without it). Elsewhere the run lists the skip.
export const hasChromium = runsHere(
  'the passkey ceremonies',
  existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (apt-get install chromium)`,
);
const BROWSER_BUNDLE = fileURLToPath(new URL('../../node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js', import.meta.url));
const PAGE = `<!doctype html><meta charset="utf-8"><title>passkeys</title><script src="/simplewebauthn-browser.js"></script>`;

export { database };

// Live bindings: assigned by usePasskeyCeremonies's hooks, read by the tests of the file that called it.
let server: Server;
let browser: Browser;
let page: Page;
let cdp: CDPSession;
let authenticatorId: string | undefined;
export let origin: string;
export let rp: PasskeyRelyingParty;
export let alice: string;
export let bob: string;

/**
 * Opens this file's database, page server and browser (before its tests), gives each test two fresh users
 * (alice, bob) and an empty authenticator, and closes everything after the tests.
 */
export function usePasskeyCeremonies(): void {
  useOwnDatabase('passkeys');
  beforeAll(async () => {
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
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(`${origin}/`);
    cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
  });

  afterAll(async () => {
    await browser?.close();
    // Test files share this module (vitest's isolate: false): the next file's browser starts with no authenticator.
    authenticatorId = undefined;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

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
}

/**
 * A fresh, empty authenticator: tests keep at most one discoverable credential on it before a sign-in, so
 * that which credential answers is never the browser's choice.
 */
export async function resetAuthenticator(): Promise<void> {
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
export function create(optionsJSON: PublicKeyCredentialCreationOptionsJSON): Promise<RegistrationResponseJSON> {
  return page.evaluate(
    (o) => (globalThis as unknown as { SimpleWebAuthnBrowser: BrowserApi }).SimpleWebAuthnBrowser.startRegistration({ optionsJSON: o }),
    optionsJSON,
  );
}

/** navigator.credentials.get() in the page, through @simplewebauthn/browser. */
export function get(optionsJSON: PublicKeyCredentialRequestOptionsJSON): Promise<AuthenticationResponseJSON> {
  return page.evaluate(
    (o) => (globalThis as unknown as { SimpleWebAuthnBrowser: BrowserApi }).SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: o }),
    optionsJSON,
  );
}

export async function registerPasskey(userId: string, binding = 'session-1', label?: string) {
  const options = await startPasskeyRegistration(database.db, rp, {
    userId,
    userName: userId === alice ? 'alice@acme.test' : 'bob@acme.test',
    binding,
  });
  const response = await create(options);
  return finishPasskeyRegistration(database.db, rp, { userId, binding, response, ...(label === undefined ? {} : { label }) });
}

/** A signed assertion from the page for a fresh authentication challenge bound to `binding`. */
export async function assertion(binding = 'session-1', now?: Date): Promise<AuthenticationResponseJSON> {
  const options = await startPasskeyAuthentication(database.db, rp, { binding }, now);
  return get(options);
}

export async function expectRefused(promise: Promise<unknown>, code: PasskeyErrorCode): Promise<void> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PasskeyError);
  expect(error).toMatchObject({ code, message: PASSKEY_ERRORS[code] });
}

export async function storedPasskey(id: string) {
  const [row] = await database.db.select().from(passkeys).where(eq(passkeys.id, id));
  return row;
}
