import { consumePoint, denied } from './decision.js';
import { sourceKey } from './keys.js';
import type { LoginLimiters } from './limiters.js';
import type { RateLimitDecision } from './types.js';

/**
 * Before a submitted token is verified. Refused, in this order: a locked-out source (until the lockout ends), a
 * source in its pause after a wrong token, a source over its attempt budget. Only the last spends a point, so a
 * refused source does not also wear down its budget. Keyed by source only: the real user, on their own
 * address, is never refused because someone else sent wrong tokens or asked for tokens in their name.
 */
export async function checkConsumeAttempt(limiters: LoginLimiters, ip: string): Promise<RateLimitDecision> {
  const key = sourceKey(ip);
  const [failures, pause] = await Promise.all([limiters.failuresByIp.get(key), limiters.pauseByIp.get(key)]);
  if (failures && failures.consumedPoints >= limiters.policy.failuresPerIp.lockoutAfter) return denied(failures.msBeforeNext);
  if (pause && pause.msBeforeNext > 0) return denied(pause.msBeforeNext);
  return consumePoint(limiters.attemptsByIp, key);
}
