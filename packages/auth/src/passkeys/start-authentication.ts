import { randomBytes } from 'node:crypto';
import type { Database } from '@latchkey/db';
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { webAuthnLibrary } from './webauthn-library.js';
import { checkTtl, DEFAULT_CHALLENGE_TTL_SECONDS, storeChallenge } from './challenges.js';
import { checkRelyingParty } from './relying-party.js';
import type { PasskeyRelyingParty, StartPasskeyAuthenticationRequest } from './types.js';

/**
 * Options for navigator.credentials.get() to sign in with a passkey; the challenge is stored, bound to
 * `binding`, for no particular user.
 *
 * Always a discoverable-credential request (no allowCredentials), whether or not a username was given and
 * whether or not that account exists. Listing the account's credential ids would tell a stranger that the
 * account exists and hand out identifiers of its authenticators; answering differently for unknown
 * usernames would do the former. So the username is not looked up at all (no query, no timing difference)
 * and the passkey itself names the account: finishPasskeyAuthentication returns whose it is, and a caller
 * that wants the typed username to match may compare afterwards. Every passkey this service creates is
 * discoverable (startPasskeyRegistration requires it), so nothing is lost.
 *
 * User verification is 'required': a passkey signs in on its own, so the authenticator must have checked
 * the person (PIN, biometrics), not just a touch; finishPasskeyAuthentication enforces it.
 */
export async function startPasskeyAuthentication(
  db: Database,
  rp: PasskeyRelyingParty,
  request: StartPasskeyAuthenticationRequest,
  now = new Date(),
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  checkRelyingParty(rp);
  const ttlSeconds = request.ttlSeconds ?? DEFAULT_CHALLENGE_TTL_SECONDS;
  checkTtl(ttlSeconds);
  const options = await (await webAuthnLibrary()).generateAuthenticationOptions({
    rpID: rp.id,
    allowCredentials: [],
    challenge: new Uint8Array(randomBytes(32)),
    timeout: ttlSeconds * 1000,
    userVerification: 'required',
  });
  await storeChallenge(db, { challenge: options.challenge, purpose: 'authentication', binding: request.binding, ttlSeconds }, now);
  return options;
}
