import type { DatabaseHandle } from '@latchkey/db';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import { createMemoryBudgetStore, type BudgetStore } from './bucket.js';
import { createPostgresBuckets } from './postgres-buckets.js';
import { openRedisBuckets } from './redis-buckets.js';
import type { SharedBuckets } from './shared-buckets.js';
import { createSlicedStore } from './sliced-store.js';

export interface OpenedBudgetStore {
  store: BudgetStore;
  /** where the buckets live */
  kind: 'memory' | SharedBuckets['kind'];
  /** gives back what this instance holds of the shared buckets, then closes their connection */
  close(): Promise<void>;
}

export interface BudgetStoreDeps {
  config: Pick<Config, 'redisUrl' | 'database' | 'budget'>;
  database: DatabaseHandle;
  logger: Logger;
  /** counts the decisions taken alone while the shared buckets fail */
  decidedLocally?: () => void;
}

/**
 * Where the buckets live: in Redis (REDIS_URL), else in PostgreSQL (DATABASE_URL), both shared by every instance;
 * else, on the embedded database (one process), in this process's memory. Redis unreachable at start-up stops it,
 * as it does for the sign-in limits; an outage after start-up is survived (sliced-store.ts).
 */
export async function openBudgetStore({ config, database, logger, decidedLocally }: BudgetStoreDeps): Promise<OpenedBudgetStore> {
  const shared: SharedBuckets | undefined = config.redisUrl
    ? await openRedisBuckets(config.redisUrl, { timeoutMs: config.database.timeoutMs })
    : config.database.url
      ? createPostgresBuckets(database, { sizes: [config.budget.guest, config.budget.plans.FREE, config.budget.plans.PRO] })
      : undefined;
  if (!shared) return { store: createMemoryBudgetStore(), kind: 'memory', close: async () => undefined };
  const where = shared.kind === 'redis' ? 'Redis' : 'PostgreSQL';
  const store = createSlicedStore({
    shared,
    now: () => performance.now(),
    onFault: (error) =>
      logger.warn({ err: error }, `budgets: the shared buckets (${where}) do not answer; each instance decides alone until they do`),
    onRecovered: () => logger.info(`budgets: the shared buckets (${where}) answer again`),
    ...(decidedLocally ? { onLocalDecision: decidedLocally } : {}),
  });
  return {
    store,
    kind: shared.kind,
    close: async () => {
      await store.close();
      await shared.close();
    },
  };
}
