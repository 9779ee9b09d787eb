import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendServiceUnavailable } from './respond.js';

/** A rate limit's verdict: go on, or wait `retryAfterSeconds` (a whole number of at least 1). */
export type LimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** The counters of a sign-in method, per source (the client address). */
export interface AttemptLimits {
  beforeAttempt(ip: string): Promise<LimitDecision>;
  afterFailure(ip: string): Promise<unknown>;
  afterSuccess(ip: string): Promise<unknown>;
}

/** Where failures that do not change the answer are told. */
export interface ErrorLog {
  error(fields: Record<string, unknown>, message: string): void;
}

/** How a route says "too many": 429 with its message and Retry-After, in the route's own form (JSON or a page). */
export type TooMany = (status: 429, message: string, headers: Record<string, string>) => void | Promise<void>;

/** One sign-in attempt from a source that the limits admitted: its outcome is recorded once known. */
export interface Attempt {
  /** the client's address, the source the counters count */
  ip: string;
  /** a wrong credential: counts towards slowing down, then locking out, the source; answers the store's outcome (undefined if it failed) */
  failed(): Promise<unknown>;
  /** signed in: the source's failures are forgotten */
  succeeded(): Promise<void>;
}

export interface LimitGateOptions {
  /** the client's address (TRUST_PROXY decides whose forwarded headers count) */
  clientAddress: (req: IncomingMessage) => string;
  log: ErrorLog;
  /** the Retry-After of the 503 when the counter store cannot answer */
  retryAfterSeconds: number;
  /** that 503's message */
  unavailableMessage: string;
}

/**
 * The rate-limit decisions of the sign-in routes, in one place: a check that refuses answers 429 with
 * Retry-After; a counter store that cannot answer is no reason to let everything through, so it answers 503;
 * recording an outcome never changes the answer (a store failure then is only logged).
 */
export function createLimitGate({ clientAddress, log, retryAfterSeconds, unavailableMessage }: LimitGateOptions) {
  const storeFailed = (error: unknown) => log.error({ err: error }, 'rate-limit store unavailable');
  const record = (outcome: Promise<unknown>): Promise<void> => outcome.then(() => undefined, storeFailed);

  /** Whether the check lets the request go on; when not, the answer (429 or 503) has been sent. */
  async function admit(res: ServerResponse, check: Promise<LimitDecision>, tooMany: TooMany): Promise<boolean> {
    let decision: LimitDecision;
    try {
      decision = await check;
    } catch (error) {
      storeFailed(error);
      sendServiceUnavailable(res, retryAfterSeconds, unavailableMessage);
      return false;
    }
    if (decision.allowed) return true;
    await tooMany(429, `Too many attempts. Try again in ${decision.retryAfterSeconds} seconds.`, {
      'retry-after': String(decision.retryAfterSeconds),
    });
    return false;
  }

  /** A sign-in attempt from this request's source, or undefined once refused. */
  async function attempt(req: IncomingMessage, res: ServerResponse, limits: AttemptLimits, tooMany: TooMany): Promise<Attempt | undefined> {
    const ip = clientAddress(req);
    if (!(await admit(res, limits.beforeAttempt(ip), tooMany))) return undefined;
    return {
      ip,
      failed: () => limits.afterFailure(ip).catch((error: unknown) => void storeFailed(error)),
      succeeded: () => record(limits.afterSuccess(ip)),
    };
  }

  return { admit, attempt, clientAddress };
}

export type LimitGate = ReturnType<typeof createLimitGate>;
