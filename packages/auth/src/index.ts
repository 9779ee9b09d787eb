// Random tokens: 32 bytes from the CSPRNG in base64url, their shape check and their stored hash
export { hashToken, isRandomTokenShaped, randomToken } from './secrets/index.js';

// Signing keys, access tokens, the caller of a request, step-up (also `@latchkey/auth/tokens`, which loads only jose)
export * from './tokens.js';

// One-time-token login (spec "One-time token login")
export {
  consumeOneTimeToken,
  consumeShortCode,
  DEFAULT_TTL_SECONDS,
  generateOneTimeToken,
  generateOneTimeTokenWithCode,
  isCodeBindingShaped,
  isShortCodeShaped,
  MAX_TTL_SECONDS,
  newCodeBinding,
  normalizeUsername,
  ONE_TIME_TOKEN_ERRORS,
  purgeExpiredOneTimeTokens,
  revokeShortCodes,
  SHORT_CODE_ATTEMPTS,
  SHORT_CODE_DIGITS,
} from './one-time-token/index.js';
export type { ConsumedOneTimeToken, GeneratedOneTimeToken, GenerateRequest } from './one-time-token/index.js';

// OpenID provider storage
export { createDrizzleAdapter, purgeExpiredOidcModels } from './oidc/drizzle-adapter.js';
export type { OidcAdapter, OidcAdapterClass, OidcPayload } from './oidc/drizzle-adapter.js';

// Delivery
export {
  createDevOutbox,
  createSmtpDelivery,
  createWebhookDelivery,
  DEV_OUTBOX_ERRORS,
  OutboxRefusedError,
  readOutbox,
  renderMessage,
  WEBHOOK_ERRORS,
  WebhookDeliveryError,
} from './delivery/index.js';
export type {
  DeliveryHandler,
  DevOutboxOptions,
  OneTimeTokenMessage,
  SmtpDeliveryOptions,
  WebhookDeliveryOptions,
} from './delivery/index.js';

// OpenID provider
export { createAuthorizationServer, API_SCOPES, INTERACTION_PATH, OIDC_ROUTES } from './oidc/provider.js';
export { FACTORS_REQUIRED, type SessionStandingQuery } from './oidc/login-policy.js';
// What a configuration loader checks against (grant types, services' rules, the scope vocabulary, factors)
export * from './configuration.js';
export { DEVICE_CODE_TTL_SECONDS, POLL_WINDOW_SECONDS, USER_CODE_MASK } from './oidc/device-flow.js';
export type { ServiceTokenPolicy } from './oidc/services.js';
export { watchConnectedAppUse } from './oidc/consent.js';
export type { AuthorizationServerOptions } from './oidc/provider.js';
export type { default as Provider, ClientMetadata } from 'oidc-provider';
export { findAccount, findActiveUserIdByEmail } from './oidc/account.js';
export { deriveCookieKeys } from './oidc/cookie-keys.js';
export { readProviderSession, signInProviderSession } from './oidc/provider-session.js';
export type { ProviderSessionState, ProviderSignIn } from './oidc/provider-session.js';

// Factors, assurance levels and multi-factor rules (spec "Multi-factor rules", Resources "Factor authorities")
export {
  acrOf,
  acrSatisfies,
  amrOf,
  appliesTo,
  DEFAULT_ACR_LEVELS,
  evaluateRules,
  FACTOR_RULE_ERRORS,
  FactorRuleError,
  issuedAmrValues,
  secondStepsOf,
  validateRules,
} from './factors/index.js';
export type {
  AccountFacts,
  AcrLevel,
  Factor,
  FactorGrant,
  FactorIdentity,
  FactorRuleErrorCode,
  FactorRequirement,
  FactorRule,
  RuleAudience,
  RuleOutcome,
} from './factors/index.js';

// Sign-in in progress, session factors and the sign-in policy
export {
  accountFactsOf,
  judgeSignIn,
  PROGRESS_TTL_SECONDS,
  purgeExpiredSessionFactors,
  purgeExpiredSignInProgress,
  readSessionFactors,
  readSignInProgress,
  recordFactor,
  saveSessionFactors,
  saveSignInProgress,
  takeSignInProgress,
  withGrant,
} from './sign-in/index.js';
export type { SignInPolicy, SignInProgress, SignInStanding } from './sign-in/index.js';

// Sessions people can see and end: listing, ending, the ended list every instance checks
export {
  createAppRevocation,
  createEndedSessions,
  createSessionEnding,
  createSignedOutListing,
  isSessionId,
  listAppsOf,
  listSessions,
  watchSessionUse,
} from './sessions/index.js';
export type {
  AppRevocationCause,
  ConnectedAppView,
  RevokeApp,
  EndedSessions,
  EndedSessionsOptions,
  EndedSessionsResult,
  EndSessions,
  SessionEndingCause,
  SessionEndingOptions,
  SessionView,
} from './sessions/index.js';

// Remembered browsers (spec Multi-factor rules 5)
export {
  DEFAULT_REMEMBER_DAYS,
  isRememberedDevice,
  listRememberedDevices,
  rememberDevice,
  revokeRememberedDevice,
} from './remembered-devices/index.js';
export type { RememberedDevice } from './remembered-devices/index.js';

// Rate limits
export { createSignInLimits, DEFAULT_KEY_PREFIX, DEFAULT_SIGN_IN_LIMIT_POLICY, RATE_LIMIT_TABLE, sourceKey } from './rate-limit/index.js';
export type {
  FailureLimit,
  FailureOutcome,
  SignInLimitPolicy,
  SignInLimitPolicyOverrides,
  SignInLimits,
  SignInLimitsOptions,
  SignInLimitStore,
  RateLimitDecision,
  WindowLimit,
} from './rate-limit/index.js';

// Passkeys (spec "Passkeys")
export {
  DEFAULT_CHALLENGE_TTL_SECONDS,
  finishPasskeyAuthentication,
  finishPasskeyRegistration,
  isPasskeyId,
  listPasskeys,
  MAX_CHALLENGE_TTL_SECONDS,
  MAX_LABEL_LENGTH,
  PASSKEY_ERRORS,
  PasskeyError,
  purgeExpiredWebAuthnChallenges,
  removePasskey,
  renamePasskey,
  startPasskeyAuthentication,
  startPasskeyRegistration,
} from './passkeys/index.js';
export type {
  AuthenticationResponseJSON,
  FinishPasskeyAuthenticationRequest,
  FinishPasskeyRegistrationRequest,
  PasskeyAuthenticationResult,
  PasskeyErrorCode,
  PasskeyRelyingParty,
  PasskeySummary,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
  StartPasskeyAuthenticationRequest,
  StartPasskeyRegistrationRequest,
} from './passkeys/index.js';

// TOTP and recovery codes
export {
  confirmTotpEnrolment,
  deriveTotpKey,
  hasConfirmedTotp,
  isTotpCodeShaped,
  removeTotp,
  startTotpEnrolment,
  TOTP_DIGITS,
  TOTP_ERRORS,
  TOTP_PERIOD_SECONDS,
  TotpError,
  verifyTotp,
} from './totp/index.js';
export type { StartTotpEnrolmentRequest, TotpCodeRequest, TotpEnrolment, TotpErrorCode } from './totp/index.js';
export {
  consumeRecoveryCode,
  countRecoveryCodes,
  DEFAULT_RECOVERY_CODE_COUNT,
  generateRecoveryCodes,
  RECOVERY_CODE_ALPHABET,
} from './recovery-codes/index.js';

// Upstream OpenID provider
export {
  createUpstreamRelyingParty,
  deriveUpstreamRequestKey,
  findLinkedUser,
  isAcceptableIssuer,
  isFederatedIdentityShaped,
  isLoopbackHttpIssuer,
  linkFederatedIdentity,
  listFederatedIdentities,
  openUpstreamRequest,
  sealUpstreamRequest,
  unlinkFederatedIdentity,
  UPSTREAM_ERRORS,
  UPSTREAM_REQUEST_TTL_SECONDS,
  UpstreamError,
} from './upstream/index.js';
export type {
  FederatedIdentity,
  LinkedIdentitySummary,
  PendingUpstreamRequest,
  UpstreamErrorCode,
  UpstreamIdentity,
  UpstreamPurpose,
  UpstreamProviderOptions,
  UpstreamRelyingParty,
} from './upstream/index.js';

// Passwords
export {
  checkPasswordPolicy,
  hasPassword,
  PASSWORD_ERRORS,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  PasswordError,
  removePassword,
  setPassword,
  verifyPassword,
} from './password/index.js';
export type { PasswordErrorCode, SetPasswordRequest, VerifyPasswordRequest } from './password/index.js';

// The authorization server's HTTP surface: its pages and login routes, as route definitions the application mounts
export { createLoginRoutes } from './web/routes.js';
export type { LoginRoutesOptions } from './web/routes.js';
export type { LoginLog } from './web/context.js';
export { page as htmlPage } from './web/html.js';
export type { UpstreamConfig } from './upstream/index.js';

// Sign-in factors: the registry, and what a factor module declares
export { SIGN_IN_FACTORS } from './factor-registry.js';
export { passkeyFactor } from './passkeys/factor.js';
export type {
  AccountPageHelpers,
  CreateFactorWeb,
  FactorSettings,
  FactorStep,
  FactorWeb,
  FactorWebDeps,
  FactorWebSettings,
  PagePart,
  SignedInAccount,
  SignInFactor,
} from './web/factor-module.js';
export { codeEndpoint, codeField, continueAfter, REMEMBER_BROWSER, refuseStep } from './web/factor-steps.js';
export type { CodeStep, FieldReading } from './web/factor-steps.js';
export type { ClientCertificateUsers } from './x509/certificate-subjects.js';

// The audit trail: security events, chained by HMAC, checkpoints, verification, retention
export * from './audit/index.js';
