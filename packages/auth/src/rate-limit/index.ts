export { createLoginLimits, DEFAULT_KEY_PREFIX } from './login-limits.js';
export { DEFAULT_LOGIN_LIMIT_POLICY } from './policy.js';
export { RATE_LIMIT_TABLE } from './store-postgres.js';
export type {
  FailureLimit,
  FailureOutcome,
  LoginLimitPolicy,
  LoginLimitPolicyOverrides,
  LoginLimits,
  LoginLimitsOptions,
  LoginLimitStore,
  RateLimitDecision,
  WindowLimit,
} from './types.js';
