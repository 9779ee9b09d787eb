export { acrOf, acrSatisfies, DEFAULT_ACR_LEVELS } from './acr.js';
export { amrOf, issuedAmrValues } from './amr.js';
export { appliesTo, evaluateRules, FACTOR_RULE_ERRORS, FactorRuleError, secondStepsOf, validateRules } from './rules.js';
export type { FactorRuleErrorCode, RuleOutcome } from './rules.js';
export type { AccountFacts, AcrLevel, Factor, FactorGrant, FactorIdentity, FactorRequirement, FactorRule, RuleAudience } from './types.js';
