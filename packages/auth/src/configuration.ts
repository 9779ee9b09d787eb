// `@latchkey/auth/configuration`: what a configuration loader checks against (factors, acr levels, rule
// validation, the response and grant types offered), without loading the provider, WebAuthn or the database
// client: the CLI and configuration stay quick to start. The main entry exports the same things.
export { DEFAULT_ACR_LEVELS } from './factors/acr.js';
export { ISSUED_AMR_VALUES } from './factors/amr.js';
export { FactorRuleError, validateRules } from './factors/rules.js';
export { FACTORS } from './factors/types.js';
export type { AcrLevel, Factor, FactorRule } from './factors/types.js';
export { OFFERED_GRANT_TYPES, OFFERED_RESPONSE_TYPES } from './oidc/offered.js';
export type { SignInPolicy } from './sign-in/requirement.js';
export {
  normalizeFingerprint,
  parseDistinguishedName,
  subjectKey,
  type ClientCertificateUsers,
} from './x509/certificate-subjects.js';
