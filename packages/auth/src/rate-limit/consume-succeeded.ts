import { sourceKey } from './keys.js';
import type { LoginLimiters } from './limiters.js';

/**
 * After a token signed someone in from `ip`: that source's failures and pause are forgotten, so a person who
 * mistyped a code is not still on the way to a lockout next time. Its attempt count is kept, which bounds what
 * a source that holds some valid tokens of its own can gain by interleaving successes with guesses.
 */
export async function recordConsumeSucceeded(limiters: LoginLimiters, ip: string): Promise<void> {
  const key = sourceKey(ip);
  await Promise.all([limiters.failuresByIp.delete(key), limiters.pauseByIp.delete(key)]);
}
