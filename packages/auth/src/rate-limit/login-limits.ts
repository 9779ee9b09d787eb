import { DatabaseUnavailableError } from '@latchkey/db';
import { checkConsumeAttempt } from './consume-attempt.js';
import { recordConsumeFailed } from './consume-failed.js';
import { recordConsumeSucceeded } from './consume-succeeded.js';
import { consumePoint } from './decision.js';
import { checkGenerate } from './generate.js';
import { sourceKey } from './keys.js';
import type { LimiterStore } from './limiter-store.js';
import { createLimiters } from './limiters.js';
import { resolvePolicy } from './policy.js';
import { openMemoryStore } from './store-memory.js';
import { openPostgresStore } from './store-postgres.js';
import { openRedisStore } from './store-redis.js';
import type { LoginLimits, LoginLimitsOptions, LoginLimitStore } from './types.js';

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
 * The rate limits of one-time-token login (spec "One-time token login" rule 4), counted in the given store.
 * Resolves once the store is usable (Redis connected; PostgreSQL reachable and its rate_limits table created),
 * so a wrong URL fails at startup. Policy and prefix are checked before anything is opened (RangeError).
 * Instances with the same store and keyPrefix share every counter: two api processes behave as one.
 */
export async function createLoginLimits(options: LoginLimitsOptions): Promise<LoginLimits> {
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
    consumeAttempt: (ip) => unavailableOnFailure(checkConsumeAttempt(limiters, ip)),
    consumeFailed: (ip) => recordConsumeFailed(limiters, ip),
    consumeSucceeded: (ip) => recordConsumeSucceeded(limiters, ip),
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

function openStore(store: LoginLimitStore): Promise<LimiterStore> {
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
