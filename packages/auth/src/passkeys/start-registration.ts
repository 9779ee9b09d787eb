import { randomBytes } from 'node:crypto';
import { and, asc, eq, passkeys, type Database } from '@latchkey/db';
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server';
import { webAuthnLibrary } from './webauthn-library.js';
import { randomToken } from '../secrets/index.js';
import { checkTtl, DEFAULT_CHALLENGE_TTL_SECONDS, storeChallenge } from './challenges.js';
import { checkRelyingParty } from './relying-party.js';
import type { PasskeyRelyingParty, StartPasskeyRegistrationRequest } from './types.js';

/**
 * Options for navigator.credentials.create() to add a passkey to a signed-in account (the caller has
 * authenticated `userId`); the challenge is stored, bound to `binding`.
 *
 * - A discoverable credential is required (residentKey 'required'): the point is signing in without typing
 *   a username. User verification is 'preferred' here; sign-in requires it (finishPasskeyAuthentication).
 * - The WebAuthn user.id is a random 32-byte handle, the same for all of the account's passkeys once it has
 *   one, never the database uuid: the authenticator keeps and returns it, and it should name nobody.
 * - excludeCredentials lists the account's passkeys for this RP ID, so an authenticator that already holds
 *   one refuses to make a second.
 * - No attestation ('none'): nothing here decides by authenticator model.
 */
export async function startPasskeyRegistration(
  db: Database,
  rp: PasskeyRelyingParty,
  request: StartPasskeyRegistrationRequest,
  now = new Date(),
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  checkRelyingParty(rp);
  const ttlSeconds = request.ttlSeconds ?? DEFAULT_CHALLENGE_TTL_SECONDS;
  checkTtl(ttlSeconds);
  const existing = await db
    .select({ id: passkeys.id, transports: passkeys.transports, userHandle: passkeys.userHandle })
    .from(passkeys)
    .where(and(eq(passkeys.userId, request.userId), eq(passkeys.rpId, rp.id)))
    .orderBy(asc(passkeys.createdAt), asc(passkeys.id));
  const userHandle = existing[0]?.userHandle ?? randomToken();

  const options = await (await webAuthnLibrary()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: request.userName,
    userDisplayName: request.displayName ?? request.userName,
    userID: new Uint8Array(Buffer.from(userHandle, 'base64url')),
    challenge: new Uint8Array(randomBytes(32)),
    timeout: ttlSeconds * 1000,
    attestationType: 'none',
    excludeCredentials: existing.map((passkey) => ({ id: passkey.id, transports: passkey.transports })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'preferred' },
  });
  await storeChallenge(
    db,
    { challenge: options.challenge, purpose: 'registration', binding: request.binding, ttlSeconds, userId: request.userId, userHandle },
    now,
  );
  return options;
}
