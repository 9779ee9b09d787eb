// `@latchkey/auth/configuration`: what a configuration loader checks against (the factor registry, acr levels, rule
// validation, the response and grant types offered), without loading the provider, WebAuthn or the database
// client: the CLI and configuration stay quick to start. The main entry exports the same things.
export { DEFAULT_ACR_LEVELS } from './factors/acr.js';
export { issuedAmrValues } from './factors/amr.js';
export { FactorRuleError, validateRules } from './factors/rules.js';
export type { AcrLevel, Factor, FactorRule } from './factors/types.js';
export { SIGN_IN_FACTORS } from './factor-registry.js';
export type { FactorSettings, SignInFactor } from './web/factor-module.js';
export {
  CLIENT_CREDENTIALS,
  DEVICE_CODE_GRANT_TYPE,
  isRedirectless,
  OFFERED_GRANT_TYPES,
  OFFERED_RESPONSE_TYPES,
  REGISTRABLE_GRANT_TYPES,
} from './oidc/offered.js';
export {
  isService,
  isServiceScope,
  SERVICE_AUTH_METHODS,
  SERVICE_SCOPES,
  USER_ONLY_SCOPES,
} from './oidc/services.js';
export {
  API_SCOPE_NAMES,
  API_SCOPE_VOCABULARY,
  apiScopesOf,
  describeScope,
  EVERY_API_SCOPE,
  isApiScope,
  OPENID_SCOPES,
  type ApiScope,
  type ApiScopeName,
} from './scopes/vocabulary.js';
export type { SignInPolicy } from './sign-in/requirement.js';
export {
  normalizeFingerprint,
  parseDistinguishedName,
  subjectKey,
  type ClientCertificateUsers,
} from './x509/certificate-subjects.js';
