import { and, eq, passkeys, sql, type Database } from '@latchkey/db';
import type { VerifiedAuthenticationResponse } from '@simplewebauthn/server';
import { webAuthnLibrary } from './webauthn-library.js';
import { consumeChallenge } from './challenges.js';
import { PasskeyError } from './errors.js';
import { checkRelyingParty } from './relying-party.js';
import type { FinishPasskeyAuthenticationRequest, PasskeyAuthenticationResult, PasskeyRelyingParty } from './types.js';

/** Credential ids are at most 1023 bytes (WebAuthn): 1364 base64url characters. */
const CREDENTIAL_ID_FORMAT = /^[A-Za-z0-9_-]{1,1364}$/;

/**
 * Verifies the browser's answer to startPasskeyAuthentication() and says whose passkey it was.
 *
 * In order: the challenge is consumed (single use, whatever the outcome; purpose authentication, same
 * binding, not expired); the credential is looked up by the id in the response among those registered for
 * rp.id (spec "Passkeys" 4: a credential registered for another RP ID is unknown here); a returned user
 * handle must be that credential's; the assertion must be signed by the stored key over this challenge,
 * come from one of rp.origins, carry rp.id's hash, and have user verification (a passkey is a whole sign-in
 * on its own, see startPasskeyAuthentication).
 *
 * Signature counter: when either the stored or the new counter is non-zero, the new one must be greater;
 * otherwise the authenticator may have been cloned and the sign-in is refused with
 * PASSKEY_COUNTER_REGRESSION (synced passkeys report 0 every time and are not affected). The library's own
 * counter check is bypassed (stored counter passed as 0) because it runs before the signature check and
 * reports with an unstructured message; the rule is applied here after the signature verified, and again
 * in the UPDATE's WHERE clause so that two assertions racing with the same counter cannot both pass.
 */
export async function finishPasskeyAuthentication(
  db: Database,
  rp: PasskeyRelyingParty,
  request: FinishPasskeyAuthenticationRequest,
  now = new Date(),
): Promise<PasskeyAuthenticationResult> {
  checkRelyingParty(rp);
  const response = request.response;
  const consumed = await consumeChallenge(
    db,
    { purpose: 'authentication', binding: request.binding },
    response?.response?.clientDataJSON,
    now,
  );

  const credentialId = response?.id;
  if (typeof credentialId !== 'string' || !CREDENTIAL_ID_FORMAT.test(credentialId) || response.rawId !== credentialId) {
    throw new PasskeyError('PASSKEY_VERIFICATION_FAILED');
  }
  const [passkey] = await db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.id, credentialId), eq(passkeys.rpId, rp.id)));
  if (!passkey) throw new PasskeyError('PASSKEY_UNKNOWN_CREDENTIAL');
  const userHandle = response.response.userHandle;
  if (userHandle !== undefined && userHandle !== passkey.userHandle) throw new PasskeyError('PASSKEY_VERIFICATION_FAILED');

  let verification: VerifiedAuthenticationResponse;
  try {
    verification = await (await webAuthnLibrary()).verifyAuthenticationResponse({
      response,
      expectedChallenge: consumed.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: { id: passkey.id, publicKey: passkey.publicKey, counter: 0, transports: passkey.transports },
      requireUserVerification: true,
    });
  } catch {
    throw new PasskeyError('PASSKEY_VERIFICATION_FAILED');
  }
  if (!verification.verified) throw new PasskeyError('PASSKEY_VERIFICATION_FAILED');
  const info = verification.authenticationInfo;
  const newCounter = info.newCounter;
  if (!counterAdvances(passkey.counter, newCounter)) throw new PasskeyError('PASSKEY_COUNTER_REGRESSION');

  const [updated] = await db
    .update(passkeys)
    .set({ counter: newCounter, lastUsedAt: now, backedUp: info.credentialBackedUp })
    .where(
      and(
        eq(passkeys.id, passkey.id),
        sql`(${passkeys.counter} < ${newCounter} or (${passkeys.counter} = 0 and ${newCounter}::bigint = 0))`,
      ),
    )
    .returning({ userId: passkeys.userId });
  if (!updated) {
    // Removed in the meantime, or another sign-in moved the counter past this one.
    const [still] = await db.select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.id, passkey.id));
    throw new PasskeyError(still ? 'PASSKEY_COUNTER_REGRESSION' : 'PASSKEY_UNKNOWN_CREDENTIAL');
  }
  return { userId: updated.userId, credentialId: passkey.id };
}

/** WebAuthn's rule: a counter that is in use (non-zero on either side) must grow. */
function counterAdvances(stored: number, received: number): boolean {
  return (stored === 0 && received === 0) || received > stored;
}
