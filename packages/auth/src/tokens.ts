// `@latchkey/auth/tokens`: signing keys, access-token verification and minting, the caller of a request
// (`callerFrom`) and step-up requirements, without the provider, WebAuthn or the database client: the API's
// hot path and the CLI's `keygen` and `token` load only jose. The main entry exports the same things.
export {
  generateSigningJwk,
  KEY_MATERIAL_ERRORS,
  KeyMaterialError,
  loadKeyMaterial,
  parseSigningKey,
  parseVerifyKeys,
  type KeyMaterial,
  type KeyMaterialErrorCode,
  type KeyMaterialOptions,
  type SigningKey,
} from './keys/key-material.js';
export {
  challengeFor,
  createAccessTokenVerifier,
  createCallerResolution,
  callerFrom,
  type AccessTokenVerifier,
  type AccessTokenVerifierOptions,
  type Caller,
  type CallerResolution,
  type CallerResolutionOptions,
  type SignedInCaller,
  type CallerResult,
  type TokenRejection,
  type VerificationResult,
} from './principal/access-token-verifier.js';
export {
  createDpopProofCheck,
  DPOP_ALGORITHMS,
  dpopChallenge,
  proofOfRequest,
  type DpopError,
  type DpopProofCheck,
  type DpopProofCheckOptions,
  type ProofContext,
} from './principal/dpop-proof.js';
export { mintAccessToken, type MintAccessTokenInput } from './principal/mint-access-token.js';
export {
  authorizationOfConnection,
  bearerToken,
  proofOfConnection,
  type PresentedCredential,
  type ProofOf,
} from './principal/presented-credential.js';
export {
  combineStepUp,
  CREDENTIAL_CHANGE_STEP_UP,
  isStepUpRequired,
  LEGAL_HOLD_STEP_UP,
  meetsStepUp,
  OWNER_GRANT_STEP_UP,
  requireStepUp,
  StepUpRequired,
  stepUpChallengeHeader,
  stepUpDescription,
  stepUpParameters,
  validateStepUp,
  type AuthenticationEvidence,
  type StepUpRequirement,
} from './principal/step-up.js';
export { ACR_ONE_FACTOR, ACR_PHISHING_RESISTANT, ACR_TWO_FACTOR } from './factors/acr.js';
export { insufficientScopeChallenge, insufficientScopeMessage } from './scopes/challenge.js';
export { apiScopesOf, EVERY_API_SCOPE, type ApiScopeName } from './scopes/vocabulary.js';
export {
  describeProtectedResource,
  PROTECTED_RESOURCE_WELL_KNOWN,
  type ProtectedResource,
  withResourceMetadata,
} from './resource/protected-resource.js';
