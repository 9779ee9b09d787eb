import { RateLimiterRes } from 'rate-limiter-flexible';
import { sourceKey } from './keys.js';
import type { LoginLimiters } from './limiters.js';
import type { FailureOutcome } from './types.js';

/**
 * After a wrong, used or expired token from `ip`. Failure number n within the window:
 * - n = lockoutAfter: the source is locked out for blockSeconds (the failure counter is blocked, which also
 *   restarts its expiry at blockSeconds from now);
 * - slowDownAfter <= n < lockoutAfter: the source must pause slowDownBaseSeconds * 2^(n - slowDownAfter)
 *   (at most blockSeconds) before its next attempt.
 * Never keyed by username: failures must not let a stranger lock the account's owner out.
 */
export async function recordConsumeFailed(limiters: LoginLimiters, ip: string): Promise<FailureOutcome> {
  const key = sourceKey(ip);
  const policy = limiters.policy.failuresPerIp;
  let failures: number;
  try {
    failures = (await limiters.failuresByIp.consume(key)).consumedPoints;
  } catch (error) {
    if (error instanceof RateLimiterRes) return 'counted'; // already locked out: nothing more to record
    throw error;
  }
  if (failures >= policy.lockoutAfter) {
    await limiters.failuresByIp.block(key, policy.blockSeconds);
    return 'locked-out';
  }
  if (failures >= policy.slowDownAfter) {
    const pause = Math.min(policy.slowDownBaseSeconds * 2 ** (failures - policy.slowDownAfter), policy.blockSeconds);
    await limiters.pauseByIp.block(key, pause);
    return 'paused';
  }
  return 'counted';
}
