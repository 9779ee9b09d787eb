import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { LimiterStore } from './limiter-store.js';
import type { LoginLimitPolicy } from './types.js';

/** One limiter per counted thing; each has its own key prefix so counters never collide. */
export interface LoginLimiters {
  policy: LoginLimitPolicy;
  generateByUsername: RateLimiterAbstract;
  generateByIp: RateLimiterAbstract;
  attemptsByIp: RateLimiterAbstract;
  /** Wrong tokens per source; its lockout is set explicitly with block() (see consume-failed.ts). */
  failuresByIp: RateLimiterAbstract;
  /** Only block()/get(): a key present means "this source must pause until it expires". */
  pauseByIp: RateLimiterAbstract;
}

export function createLimiters(store: LimiterStore, keyPrefix: string, policy: LoginLimitPolicy): LoginLimiters {
  const prefix = `${keyPrefix}:login`;
  const window = (name: string, limit: LoginLimitPolicy['generatePerIp']) =>
    store.create({
      keyPrefix: `${prefix}:${name}`,
      points: limit.points,
      duration: limit.durationSeconds,
      blockDuration: limit.blockSeconds,
    });
  const failures = policy.failuresPerIp;
  return {
    policy,
    generateByUsername: window('generate-user', policy.generatePerUsername),
    generateByIp: window('generate-ip', policy.generatePerIp),
    attemptsByIp: window('attempt-ip', policy.attemptsPerIp),
    failuresByIp: store.create({
      keyPrefix: `${prefix}:failure-ip`,
      points: failures.lockoutAfter,
      duration: failures.durationSeconds,
      blockDuration: 0,
    }),
    pauseByIp: store.create({ keyPrefix: `${prefix}:pause-ip`, points: 1, duration: failures.blockSeconds, blockDuration: 0 }),
  };
}
