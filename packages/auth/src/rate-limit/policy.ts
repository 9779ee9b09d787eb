import type { FailureLimit, SignInLimitPolicy, SignInLimitPolicyOverrides, WindowLimit } from './types.js';

/**
 * The defaults, sized for people signing in by e-mail or SMS code / magic link:
 * - generation: 5 per username and 20 per client IP per 15 minutes; a source that goes over is locked out of
 *   generating for 15 minutes (rule 4 "subject to lockout"). The per-username limit only ends with its window:
 *   a stranger can delay a new token for a user, but never stop that user consuming one already received.
 * - consumption: 30 submitted tokens per client IP per 15 minutes.
 * - wrong tokens per client IP within 15 minutes: from the 2nd one, a pause of 2 s, then 4 s, then 8 s before
 *   the next attempt; the 5th locks that source out for 15 minutes. The account itself is never locked.
 */
export const DEFAULT_SIGN_IN_LIMIT_POLICY: Readonly<SignInLimitPolicy> = Object.freeze({
  generatePerUsername: Object.freeze({ points: 5, durationSeconds: 900, blockSeconds: 0 }),
  generatePerIp: Object.freeze({ points: 20, durationSeconds: 900, blockSeconds: 900 }),
  attemptsPerIp: Object.freeze({ points: 30, durationSeconds: 900, blockSeconds: 0 }),
  failuresPerIp: Object.freeze({ lockoutAfter: 5, durationSeconds: 900, blockSeconds: 900, slowDownAfter: 2, slowDownBaseSeconds: 2 }),
});

/**
 * Defaults merged with overrides, field by field, then checked. Whole seconds and whole points only: the Redis
 * limiter truncates durations to seconds, and a fractional limit would silently mean something else.
 */
export function resolvePolicy(overrides: SignInLimitPolicyOverrides = {}): SignInLimitPolicy {
  const policy: SignInLimitPolicy = {
    generatePerUsername: { ...DEFAULT_SIGN_IN_LIMIT_POLICY.generatePerUsername, ...overrides.generatePerUsername },
    generatePerIp: { ...DEFAULT_SIGN_IN_LIMIT_POLICY.generatePerIp, ...overrides.generatePerIp },
    attemptsPerIp: { ...DEFAULT_SIGN_IN_LIMIT_POLICY.attemptsPerIp, ...overrides.attemptsPerIp },
    failuresPerIp: { ...DEFAULT_SIGN_IN_LIMIT_POLICY.failuresPerIp, ...overrides.failuresPerIp },
  };
  checkWindow('generatePerUsername', policy.generatePerUsername);
  checkWindow('generatePerIp', policy.generatePerIp);
  checkWindow('attemptsPerIp', policy.attemptsPerIp);
  checkFailures(policy.failuresPerIp);
  return policy;
}

function checkWindow(name: string, limit: WindowLimit): void {
  wholeNumber(`${name}.points`, limit.points, 1);
  wholeNumber(`${name}.durationSeconds`, limit.durationSeconds, 1);
  wholeNumber(`${name}.blockSeconds`, limit.blockSeconds, 0);
}

function checkFailures(limit: FailureLimit): void {
  wholeNumber('failuresPerIp.lockoutAfter', limit.lockoutAfter, 1);
  wholeNumber('failuresPerIp.durationSeconds', limit.durationSeconds, 1);
  wholeNumber('failuresPerIp.blockSeconds', limit.blockSeconds, 1);
  wholeNumber('failuresPerIp.slowDownAfter', limit.slowDownAfter, 1);
  wholeNumber('failuresPerIp.slowDownBaseSeconds', limit.slowDownBaseSeconds, 1);
}

function wholeNumber(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`rate-limit policy ${name} must be a whole number of at least ${min}, got ${value}`);
  }
}
