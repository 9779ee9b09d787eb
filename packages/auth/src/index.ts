// One-time-token login (spec "One-time token login")
export {
  consumeOneTimeToken,
  DEFAULT_TTL_SECONDS,
  generateOneTimeToken,
  MAX_TTL_SECONDS,
  normalizeUsername,
  ONE_TIME_TOKEN_ERRORS,
  purgeExpiredOneTimeTokens,
} from './one-time-token/index.js';
export type { ConsumedOneTimeToken, GeneratedOneTimeToken, GenerateRequest } from './one-time-token/index.js';

// OpenID provider storage
export { createDrizzleAdapter, purgeExpiredOidcModels } from './oidc/drizzle-adapter.js';
export type { OidcAdapter, OidcAdapterClass, OidcPayload } from './oidc/drizzle-adapter.js';

// Delivery
export { createDevOutbox, createSmtpDelivery, createWebhookDelivery, OutboxRefusedError, readOutbox, renderMessage, WebhookDeliveryError } from './delivery/index.js';
export type { DeliveryHandler, DevOutboxOptions, OneTimeTokenMessage, SmtpDeliveryOptions, WebhookDeliveryOptions } from './delivery/index.js';

// OpenID provider
export { createAuthorizationServer, API_SCOPES, INTERACTION_PATH, OIDC_ROUTES } from './oidc/provider.js';
export type { AuthorizationServerOptions } from './oidc/provider.js';
export type { default as Provider, ClientMetadata } from 'oidc-provider';
export { findAccount, findUserIdByEmail } from './oidc/account.js';
export { deriveCookieKeys } from './oidc/cookie-keys.js';

// Rate limits
export { createLoginLimits, DEFAULT_KEY_PREFIX, DEFAULT_LOGIN_LIMIT_POLICY, RATE_LIMIT_TABLE } from './rate-limit/index.js';
export type {
  FailureLimit,
  LoginLimitPolicy,
  LoginLimitPolicyOverrides,
  LoginLimits,
  LoginLimitsOptions,
  LoginLimitStore,
  RateLimitDecision,
  WindowLimit,
} from './rate-limit/index.js';

// Passkeys (spec "Passkeys")
export {
  DEFAULT_CHALLENGE_TTL_SECONDS,
  finishPasskeyAuthentication,
  finishPasskeyRegistration,
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
