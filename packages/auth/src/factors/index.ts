export { acrOf, acrSatisfies, DEFAULT_ACR_LEVELS } from './acr.js';
export { AMR_OF, amrOf, ISSUED_AMR_VALUES } from './amr.js';
export { appliesTo, evaluateRules, FACTOR_RULE_ERRORS, FactorRuleError, SUPPRESSIBLE_FACTORS, validateRules } from './rules.js';
export type { FactorRuleErrorCode, RuleOutcome } from './rules.js';
export { FACTORS } from './types.js';
export type { AccountFacts, AcrLevel, Factor, FactorGrant, FactorRequirement, FactorRule, RuleAudience } from './types.js';
