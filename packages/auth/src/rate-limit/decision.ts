import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitDecision } from './types.js';

export const ALLOWED: RateLimitDecision = Object.freeze({ allowed: true });

/** A refusal; Retry-After is whole seconds and never 0 (0 would invite an immediate retry). */
export function denied(msBeforeNext: number): RateLimitDecision {
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)) };
}

/**
 * Consumes one point. rate-limiter-flexible rejects with a RateLimiterRes when over the limit, and with an Error
 * when the store fails: the first is a decision, the second is passed on.
 */
export async function consumePoint(limiter: RateLimiterAbstract, key: string): Promise<RateLimitDecision> {
  try {
    await limiter.consume(key);
    return ALLOWED;
  } catch (error) {
    if (error instanceof RateLimiterRes) return denied(error.msBeforeNext);
    throw error;
  }
}
