/**
 * What a login endpoint does after a check: go on, or answer 429 with `Retry-After: retryAfterSeconds`.
 * `retryAfterSeconds` is a whole number of at least 1, ready for the header.
 */
export type RateLimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** What one recorded failure did to its source: nothing yet, a pause before its next attempt, or a lockout. */
export type FailureOutcome = 'counted' | 'paused' | 'locked-out';

/**
 * The counters behind one-time-token login (spec "One-time token login" rule 4: generation is rate limited and
 * subject to lockout). All methods reject when the counter store (PostgreSQL, Redis) fails; the endpoint should
 * then answer 503 rather than guess.
 *
 * Who is counted where, and why:
 * - generation: per username (stops mail/SMS bombing of one person from many addresses) and per client IP
 *   (stops one source spraying many usernames). The same counts apply whether or not the account exists, so a
 *   429 reveals nothing about accounts (rule 3); this module never knows about accounts.
 * - consumption and failures: per client IP only. Counting wrong tokens per username would let a stranger lock
 *   the real user out; counting them per source slows down, then stops, whoever sends them.
 */
export interface SignInLimits {
  /** Counts one token generation for this source and username. Call before generating (and delivering). */
  generate(ip: string, username: string): Promise<RateLimitDecision>;
  /**
   * Checked BEFORE verifying a submitted token: refuses a source that is locked out or slowed down after wrong
   * tokens, or that submits too often. Not keyed by username: a username whose generation is exhausted can
   * still consume the token it already received.
   */
  beforeAttempt(ip: string): Promise<RateLimitDecision>;
  /**
   * After a wrong, used or expired token: counts towards slowing down and then locking out that source, and
   * says what this failure did (`locked-out` only for the failure that starts a lockout).
   */
  afterFailure(ip: string): Promise<FailureOutcome>;
  /** After a token signed someone in: forgets that source's failures (its attempt count stays). */
  afterSuccess(ip: string): Promise<void>;
  /**
   * Another fixed window per client address, counted in the same store (so instances share it): for endpoints
   * beyond login, such as persisted-query registrations. Each call spends a point of the source's budget.
   */
  window(name: string, limit: WindowLimit): (ip: string) => Promise<RateLimitDecision>;
  /** Releases the store connection (pool or Redis client). Idempotent. */
  close(): Promise<void>;
}

/** A fixed window: `points` events per `durationSeconds`, counted from the window's first event. */
export interface WindowLimit {
  points: number;
  durationSeconds: number;
  /** Once the limit is exceeded, refuse for this long from that moment (lockout); 0: only until the window ends. */
  blockSeconds: number;
}

/** Wrong tokens from one source: first a growing pause between attempts, then a lockout. */
export interface FailureLimit {
  /** The failure that locks the source out (e.g. 5: the fifth wrong token within the window). */
  lockoutAfter: number;
  /** The window failures are counted in. */
  durationSeconds: number;
  /** How long a locked-out source is refused. */
  blockSeconds: number;
  /** The failure from which each further one imposes a pause; at or above `lockoutAfter`: no pauses. */
  slowDownAfter: number;
  /** Pause after failure number `slowDownAfter`; it doubles with each further failure (capped at `blockSeconds`). */
  slowDownBaseSeconds: number;
}

export interface SignInLimitPolicy {
  generatePerUsername: WindowLimit;
  generatePerIp: WindowLimit;
  /** Every submitted token counts, right or wrong: bounds guessing even by a source that sometimes succeeds. */
  attemptsPerIp: WindowLimit;
  failuresPerIp: FailureLimit;
}

/** Any group or field left out keeps its default (see DEFAULT_SIGN_IN_LIMIT_POLICY). */
export type SignInLimitPolicyOverrides = { [K in keyof SignInLimitPolicy]?: Partial<SignInLimitPolicy[K]> };

/**
 * Where the counters live (several instances must share their counters): memory only for the embedded single-instance default and
 * tests; PostgreSQL or Redis whenever more than one instance runs, so all instances share one count.
 */
export type SignInLimitStore =
  | { kind: 'memory' }
  | {
      kind: 'postgres';
      url: string;
      /** every check answers (or fails) within this long (DATABASE_TIMEOUT). @default 5000 */
      timeoutMs?: number;
      /** false while the database is known to be down: checks then fail at once instead of waiting */
      available?: () => boolean;
    }
  | {
      kind: 'redis';
      url: string;
      /** every command answers (or fails) within this long, without ioredis' 20 retries. @default 5000 */
      timeoutMs?: number;
    };

export interface SignInLimitsOptions {
  store: SignInLimitStore;
  /**
   * Prepended to every counter key; instances with the same prefix on the same store share counters.
   * Letters, digits and `_.:-`, at most 100 characters. @default 'latchkey'
   */
  keyPrefix?: string;
  policy?: SignInLimitPolicyOverrides;
}
