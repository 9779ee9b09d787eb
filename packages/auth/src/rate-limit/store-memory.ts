import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { LimiterStore } from './limiter-store.js';

/**
 * Counters in this process only: right for the embedded single-instance default and for tests. A second
 * instance would keep its own counts, multiplying every limit (several instances must share their counters).
 */
export function openMemoryStore(): LimiterStore {
  return {
    create: (spec) => new RateLimiterMemory(spec),
    close: async () => undefined,
  };
}
