export { createSignInLimits, DEFAULT_KEY_PREFIX } from './sign-in-limits.js';
export { sourceKey } from './keys.js';
export { DEFAULT_SIGN_IN_LIMIT_POLICY } from './policy.js';
export { RATE_LIMIT_TABLE } from './stores.js';
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
} from './types.js';
