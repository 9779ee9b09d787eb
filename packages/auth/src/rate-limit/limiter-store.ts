import type { RateLimiterAbstract } from 'rate-limiter-flexible';

/** Options of one rate-limiter-flexible limiter, in its own units (seconds). */
export interface LimiterSpec {
  keyPrefix: string;
  points: number;
  duration: number;
  blockDuration: number;
}

/**
 * An opened counter store: it makes limiters that all count in the same place, and owns the connection they
 * share. Opening is asynchronous (connect, create the table) so that a misconfigured store fails at startup,
 * not on the first login.
 */
export interface LimiterStore {
  create(spec: LimiterSpec): RateLimiterAbstract;
  close(): Promise<void>;
}
