import { DatabaseUnavailableError } from '@latchkey/db';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { sourceKey, usernameKey } from './keys.js';
import { resolvePolicy } from './policy.js';
import { type LimiterStore, openMemoryStore, openPostgresStore, openRedisStore } from './stores.js';
import type { FailureOutcome, SignInLimitPolicy, SignInLimits, SignInLimitsOptions, SignInLimitStore, RateLimitDecision } from './types.js';

export const DEFAULT_KEY_PREFIX = 'latchkey';

/**
 * The counter store (PostgreSQL or Redis) could not answer a check. An endpoint must not guess (letting every
 * attempt through would defeat the limit): it answers SERVICE_UNAVAILABLE (503 with Retry-After), as for any
 * unavailable data store.
 */
export class CounterStoreUnavailableError extends DatabaseUnavailableError {
  override name = 'CounterStoreUnavailableError';
  constructor(cause: unknown) {
    super('The rate-limit store is unavailable.', { cause });
  }
}

const unavailableOnFailure = <T>(check: Promise<T>): Promise<T> =>
  check.catch((error: unknown) => {
    throw new CounterStoreUnavailableError(error);
  });
const KEY_PREFIX = /^[A-Za-z0-9_.:-]{1,100}$/;

/**
 * The rate limits of sign-in, counted in the given store: one-time-token generation (spec "One-time token login"
 * rule 4) and every factor's attempts (`beforeAttempt`, then `afterFailure` or `afterSuccess`).
 * Resolves once the store is usable (Redis connected; PostgreSQL reachable and its rate_limits table created),
 * so a wrong URL fails at startup. Policy and prefix are checked before anything is opened (RangeError).
 * Instances with the same store and keyPrefix share every counter: two api processes behave as one.
 */
export async function createSignInLimits(options: SignInLimitsOptions): Promise<SignInLimits> {
  const policy = resolvePolicy(options.policy);
  const keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  if (!KEY_PREFIX.test(keyPrefix)) {
    throw new RangeError('keyPrefix must be 1 to 100 letters, digits or _.:-');
  }
  const store = await openStore(options.store);
  const limiters = createLimiters(store, keyPrefix, policy);
  let closing: Promise<void> | undefined;
  return {
    generate: (ip, username) => unavailableOnFailure(checkGenerate(limiters, ip, username)),
    beforeAttempt: (ip) => unavailableOnFailure(checkAttempt(limiters, ip)),
    afterFailure: (ip) => recordFailure(limiters, ip),
    afterSuccess: (ip) => recordSuccess(limiters, ip),
    window(name, limit) {
      if (!/^[a-z0-9-]{1,40}$/.test(name)) throw new RangeError('a window name is 1 to 40 lower-case letters, digits or dashes');
      const limiter = store.create({
        keyPrefix: `${keyPrefix}:window:${name}`,
        points: limit.points,
        duration: limit.durationSeconds,
        blockDuration: limit.blockSeconds,
      });
      return (ip) => unavailableOnFailure(consumePoint(limiter, sourceKey(ip)));
    },
    close: () => (closing ??= store.close()),
  };
}

function openStore(store: SignInLimitStore): Promise<LimiterStore> {
  switch (store.kind) {
    case 'memory':
      return Promise.resolve(openMemoryStore());
    case 'postgres':
      return openPostgresStore(store.url, store);
    case 'redis':
      return openRedisStore(store.url, store);
    default:
      throw new TypeError(`unknown rate-limit store kind: ${(store as { kind: unknown }).kind}`);
  }
}

/** One limiter per counted thing; each has its own key prefix so counters never collide. */
export interface SignInLimiters {
  policy: SignInLimitPolicy;
  generateByUsername: RateLimiterAbstract;
  generateByIp: RateLimiterAbstract;
  attemptsByIp: RateLimiterAbstract;
  /** Wrong tokens per source; its lockout is set explicitly with block() (see consume-failed.ts). */
  failuresByIp: RateLimiterAbstract;
  /** Only block()/get(): a key present means "this source must pause until it expires". */
  pauseByIp: RateLimiterAbstract;
}

export function createLimiters(store: LimiterStore, keyPrefix: string, policy: SignInLimitPolicy): SignInLimiters {
  const prefix = `${keyPrefix}:login`;
  const window = (name: string, limit: SignInLimitPolicy['generatePerIp']) =>
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

/**
 * One token generation (spec rule 4). The source is checked first: a source that is over its limit spends
 * none of the username's budget, so one noisy address cannot also use up a user's generations.
 * The username budget is spent whether or not the account exists (no account enumeration, rule 3).
 */
export async function checkGenerate(limiters: SignInLimiters, ip: string, username: string): Promise<RateLimitDecision> {
  const bySource = await consumePoint(limiters.generateByIp, sourceKey(ip));
  if (!bySource.allowed) return bySource;
  return consumePoint(limiters.generateByUsername, usernameKey(username));
}

/**
 * Before a submitted token is verified. Refused, in this order: a locked-out source (until the lockout ends), a
 * source in its pause after a wrong token, a source over its attempt budget. Only the last spends a point, so a
 * refused source does not also wear down its budget. Keyed by source only: the real user, on their own
 * address, is never refused because someone else sent wrong tokens or asked for tokens in their name.
 */
export async function checkAttempt(limiters: SignInLimiters, ip: string): Promise<RateLimitDecision> {
  const key = sourceKey(ip);
  const [failures, pause] = await Promise.all([limiters.failuresByIp.get(key), limiters.pauseByIp.get(key)]);
  if (failures && failures.consumedPoints >= limiters.policy.failuresPerIp.lockoutAfter) return denied(failures.msBeforeNext);
  if (pause && pause.msBeforeNext > 0) return denied(pause.msBeforeNext);
  return consumePoint(limiters.attemptsByIp, key);
}

/**
 * After a wrong, used or expired token from `ip`. Failure number n within the window:
 * - n = lockoutAfter: the source is locked out for blockSeconds (the failure counter is blocked, which also
 *   restarts its expiry at blockSeconds from now);
 * - slowDownAfter <= n < lockoutAfter: the source must pause slowDownBaseSeconds * 2^(n - slowDownAfter)
 *   (at most blockSeconds) before its next attempt.
 * Never keyed by username: failures must not let a stranger lock the account's owner out.
 */
export async function recordFailure(limiters: SignInLimiters, ip: string): Promise<FailureOutcome> {
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

/**
 * After a token signed someone in from `ip`: that source's failures and pause are forgotten, so a person who
 * mistyped a code is not still on the way to a lockout next time. Its attempt count is kept, which bounds what
 * a source that holds some valid tokens of its own can gain by interleaving successes with guesses.
 */
export async function recordSuccess(limiters: SignInLimiters, ip: string): Promise<void> {
  const key = sourceKey(ip);
  await Promise.all([limiters.failuresByIp.delete(key), limiters.pauseByIp.delete(key)]);
}
