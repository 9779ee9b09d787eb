import { consumePoint } from './decision.js';
import { sourceKey, usernameKey } from './keys.js';
import type { LoginLimiters } from './limiters.js';
import type { RateLimitDecision } from './types.js';

/**
 * One token generation (spec rule 4). The source is checked first: a source that is over its limit spends
 * none of the username's budget, so one noisy address cannot also use up a user's generations.
 * The username budget is spent whether or not the account exists (no account enumeration, rule 3).
 */
export async function checkGenerate(limiters: LoginLimiters, ip: string, username: string): Promise<RateLimitDecision> {
  const bySource = await consumePoint(limiters.generateByIp, sourceKey(ip));
  if (!bySource.allowed) return bySource;
  return consumePoint(limiters.generateByUsername, usernameKey(username));
}
