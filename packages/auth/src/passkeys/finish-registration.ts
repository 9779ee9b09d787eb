import { passkeys, type Database } from '@latchkey/db';
import type { VerifiedRegistrationResponse } from '@simplewebauthn/server';
import { webAuthnLibrary } from './webauthn-library.js';
import { consumeChallenge } from './challenges.js';
import { PasskeyError } from './errors.js';
import { checkRelyingParty } from './relying-party.js';
import { normalizeLabel, toSummary } from './summary.js';
import type { FinishPasskeyRegistrationRequest, PasskeyRelyingParty, PasskeySummary } from './types.js';

/**
 * Verifies the browser's answer to startPasskeyRegistration() and stores the credential.
 *
 * The challenge is consumed first (single use, whatever the outcome) and must have been issued for
 * registration, to this user, with this binding, and not have expired. The response must come from one of
 * rp.origins and be scoped to rp.id (spec "Passkeys" 2, 4); the stored row remembers rp.id so the
 * credential is never accepted for another. User verification is not required at registration (the options
 * say 'preferred' and the account is already signed in); sign-in requires it.
 */
export async function finishPasskeyRegistration(
  db: Database,
  rp: PasskeyRelyingParty,
  request: FinishPasskeyRegistrationRequest,
  now = new Date(),
): Promise<PasskeySummary> {
  checkRelyingParty(rp);
  const label = request.label === undefined ? null : normalizeLabel(request.label);
  const consumed = await consumeChallenge(
    db,
    { purpose: 'registration', binding: request.binding, userId: request.userId },
    request.response?.response?.clientDataJSON,
    now,
  );
  if (!consumed.userHandle) throw new PasskeyError('PASSKEY_CHALLENGE_INVALID');

  let verification: VerifiedRegistrationResponse;
  try {
    verification = await (await webAuthnLibrary()).verifyRegistrationResponse({
      response: request.response,
      expectedChallenge: consumed.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserPresence: true,
      requireUserVerification: false,
    });
  } catch {
    throw new PasskeyError('PASSKEY_VERIFICATION_FAILED');
  }
  if (!verification.verified) throw new PasskeyError('PASSKEY_VERIFICATION_FAILED');
  const info = verification.registrationInfo;
  // The id the browser reports must be the one inside the signed authenticator data.
  if (info.credential.id !== request.response.id) throw new PasskeyError('PASSKEY_VERIFICATION_FAILED');

  const [row] = await db
    .insert(passkeys)
    .values({
      id: info.credential.id,
      userId: request.userId,
      userHandle: consumed.userHandle,
      publicKey: info.credential.publicKey,
      counter: info.credential.counter,
      transports: info.credential.transports ?? [],
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
      aaguid: info.aaguid,
      label,
      rpId: rp.id,
      createdAt: now,
    })
    // A credential id is globally unique; a second registration of it (by anyone) is refused, never merged.
    .onConflictDoNothing({ target: passkeys.id })
    .returning();
  if (!row) throw new PasskeyError('PASSKEY_ALREADY_REGISTERED');
  return toSummary(row);
}
