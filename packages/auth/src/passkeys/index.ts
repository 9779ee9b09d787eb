export { DEFAULT_CHALLENGE_TTL_SECONDS, MAX_CHALLENGE_TTL_SECONDS, purgeExpiredWebAuthnChallenges } from './challenges.js';
export { PASSKEY_ERRORS, PasskeyError } from './errors.js';
export type { PasskeyErrorCode } from './errors.js';
export { finishPasskeyAuthentication } from './finish-authentication.js';
export { finishPasskeyRegistration } from './finish-registration.js';
export { listPasskeys } from './list.js';
export { removePasskey } from './remove.js';
export { renamePasskey } from './rename.js';
export { startPasskeyAuthentication } from './start-authentication.js';
export { startPasskeyRegistration } from './start-registration.js';
export { isPasskeyId, MAX_LABEL_LENGTH } from './summary.js';
export type {
  FinishPasskeyAuthenticationRequest,
  FinishPasskeyRegistrationRequest,
  PasskeyAuthenticationResult,
  PasskeyRelyingParty,
  PasskeySummary,
  StartPasskeyAuthenticationRequest,
  StartPasskeyRegistrationRequest,
} from './types.js';
export type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
