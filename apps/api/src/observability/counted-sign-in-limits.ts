import type { FailureOutcome, SignInLimits, RateLimitDecision } from '@latchkey/auth';
import type { ServiceMetrics, SignInMethod } from './metrics.js';

/**
 * The login limits, counted: every refusal under its limit's name, and, for the limits handed to one sign-in
 * method's routes, that method's attempts, successes, failures and lockouts. The decisions are the store's own;
 * nothing here changes what a caller is told.
 */
export function countSignInLimits(limits: SignInLimits, metrics: ServiceMetrics) {
  const refusalCounter = (limit: string) => (decision: RateLimitDecision) => {
    if (!decision.allowed) metrics.refused(limit);
    return decision;
  };
  const signInRefused = refusalCounter('sign-in');
  const generationRefused = refusalCounter('token-generation');
  const counted: SignInLimits = {
    ...limits,
    generate: (ip, username) => limits.generate(ip, username).then(generationRefused),
    beforeAttempt: (ip) => limits.beforeAttempt(ip).then(signInRefused),
    window(name, limit) {
      const take = limits.window(name, limit);
      const refused = refusalCounter(name);
      return (ip) => take(ip).then(refused);
    },
  };
  const byMethod = new Map<SignInMethod, SignInLimits>();

  /** The limits for the routes of one sign-in method (one object per method, made once). */
  function forMethod(method: SignInMethod): SignInLimits {
    let bound = byMethod.get(method);
    if (!bound) {
      const counters = metrics.signIn(method);
      const afterFailure = (outcome: FailureOutcome) => {
        if (outcome === 'locked-out') counters.lockout();
        return outcome;
      };
      bound = {
        ...counted,
        beforeAttempt(ip) {
          counters.attempt();
          return counted.beforeAttempt(ip);
        },
        afterFailure(ip) {
          counters.failure();
          return counted.afterFailure(ip).then(afterFailure);
        },
        afterSuccess(ip) {
          counters.success();
          return counted.afterSuccess(ip);
        },
      };
      byMethod.set(method, bound);
    }
    return bound;
  }

  return { limits: counted, forMethod };
}
