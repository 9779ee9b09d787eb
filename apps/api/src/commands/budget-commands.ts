// `pnpm latchkey budget show|reset --email E`: an operator's view of a user's fair-use budget, in the buckets every
// instance shares (docs/graphql.md, "Budgets"). Loaded only when such a command runs.
import { parseArgs } from 'node:util';
import { listPlansOfUser } from '@latchkey/db';
import { CodedError } from '@latchkey/errors';
import { accountBucketKey } from '../budget/budgets.js';
import { bestPlanOf } from '../budget/plans.js';
import { createPostgresBuckets } from '../budget/postgres-buckets.js';
import { openRedisBuckets } from '../budget/redis-buckets.js';
import type { SharedBuckets } from '../budget/shared-buckets.js';
import type { Config } from '../config/load.js';
import { redisFault } from '../config/start-up-errors.js';
import { accountIdOf, withDatabase } from './database-commands.js';
import { UsageError, requiredEmail } from './usage.js';

/**
 * On the embedded database the buckets live in the server's memory (one process), which no other process reaches:
 * the CLI cannot open that database beside the server either. What it answers instead (code BUDGETS_IN_SERVER_MEMORY,
 * exit 1).
 */
export class BudgetsInServerMemoryError extends CodedError<'BUDGETS_IN_SERVER_MEMORY'> {
  constructor(command: string) {
    super(
      'BudgetsInServerMemoryError',
      'BUDGETS_IN_SERVER_MEMORY',
      `budget ${command}: on the embedded database the buckets live in the running server's memory, which this command cannot reach; ` +
        'the caller sees its own with `{ rateLimit { currentlyAvailable maximumAvailable } }`, and a restart of the server fills every bucket. ' +
        'With DATABASE_URL (PostgreSQL) or REDIS_URL the buckets are shared and this command reads them',
    );
  }
}

function emailOption(args: string[], command: string): string {
  const { values } = parseArgs({ args, options: { email: { type: 'string' } }, strict: true });
  return requiredEmail(values.email, `budget ${command}`);
}

/** The shared buckets of this deployment, as the server opens them: Redis when REDIS_URL is set, else PostgreSQL. */
async function withSharedBuckets<T>(
  config: Config,
  command: string,
  run: (buckets: SharedBuckets, database: Parameters<Parameters<typeof withDatabase>[1]>[0]) => Promise<T>,
): Promise<T> {
  if (!config.budget.enabled) throw new UsageError(`budget ${command}: budgets are off here (API_BUDGET=off)`);
  if (!config.redisUrl && !config.database.url) throw new BudgetsInServerMemoryError(command);
  return withDatabase(config, async (database) => {
    const buckets = config.redisUrl
      ? await openRedisBuckets(config.redisUrl, { timeoutMs: config.database.timeoutMs }).catch((error: unknown) => {
          throw redisFault(error, config.redisUrl);
        })
      : createPostgresBuckets(database);
    try {
      return await run(buckets, database);
    } finally {
      await buckets.close();
    }
  });
}

async function show(config: Config, args: string[]): Promise<void> {
  const email = emailOption(args, 'show');
  await withSharedBuckets(config, 'show', async (buckets, database) => {
    const userId = await accountIdOf(database, email);
    const plan = bestPlanOf(await listPlansOfUser(database.db, userId));
    const size = config.budget.plans[plan];
    const level = await buckets.peek(accountBucketKey(userId), size);
    const shown = {
      email,
      plan,
      maximumAvailable: size.capacity,
      currentlyAvailable: Math.max(0, Math.floor(level)),
      restoreRate: size.restorePerSecond,
      store: buckets.kind,
    };
    process.stdout.write(`${JSON.stringify(shown)}\n`);
  });
}

async function reset(config: Config, args: string[]): Promise<void> {
  const email = emailOption(args, 'reset');
  await withSharedBuckets(config, 'reset', async (buckets, database) => {
    const userId = await accountIdOf(database, email);
    await buckets.reset(accountBucketKey(userId));
    // What each instance still holds of it (a slice at most) is spent or given back within a second.
    process.stdout.write(`${email}: the budget is full again\n`);
  });
}

export async function budgetCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'show') return show(config, rest);
  if (sub === 'reset') return reset(config, rest);
  throw new UsageError(`budget: say show or reset${sub === undefined ? '' : `, not "${sub}"`}`);
}
