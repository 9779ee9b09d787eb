import type { BucketSize } from '../config/budget.js';
import type { Admission } from './bucket.js';

/** `extensions.cost` of a response, in Shopify's shape (its keys are a contract). */
export interface CostExtension {
  requestedQueryCost: number;
  /** null until the operation has ended (a refused one: its minimum charge) */
  actualQueryCost: number | null;
  throttleStatus: { maximumAvailable: number; currentlyAvailable: number; restoreRate: number };
}

export function costExtension(size: BucketSize, requested: number, actual: number | null, level: number): CostExtension {
  return {
    requestedQueryCost: requested,
    actualQueryCost: actual,
    throttleStatus: {
      maximumAvailable: size.capacity,
      currentlyAvailable: Math.max(0, Math.floor(level)),
      restoreRate: size.restorePerSecond,
    },
  };
}

/** The policy's name in the RateLimit fields. */
const POLICY = '"api-budget"';

/**
 * The RateLimit fields (IETF httpapi draft-ietf-httpapi-ratelimit-headers-10): the policy (its quota, and the
 * seconds a drained bucket takes to fill) and the points remaining now with the seconds until the bucket is full.
 * The quota is in cost points: the draft's registry has no such unit, so no `qu` is sent (docs/graphql.md).
 */
export function rateLimitFields(size: BucketSize, level: number): { 'RateLimit-Policy': string; RateLimit: string } {
  const remaining = Math.max(0, Math.floor(level));
  const window = Math.ceil(size.capacity / size.restorePerSecond);
  const untilFull = Math.max(0, Math.ceil((size.capacity - level) / size.restorePerSecond));
  return { 'RateLimit-Policy': `${POLICY};q=${size.capacity};w=${window}`, RateLimit: `${POLICY};r=${remaining};t=${untilFull}` };
}

/**
 * The Retry-After of a refusal: whole seconds (at least 1) until a bucket at `level`, the level after the refusal's
 * own minimum charge, holds `cost` again, so a client that waits that long is admitted; undefined where waiting
 * cannot help (the store said so: the cost exceeds the capacity).
 */
export const retryAfterOf = (admission: Admission, size: BucketSize, cost: number, level: number): number | undefined =>
  admission.retryAfterSeconds === undefined ? undefined : Math.max(1, Math.ceil((cost - level) / size.restorePerSecond));
