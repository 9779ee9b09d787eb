import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onPostgres, testTempDir } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireBuild, run, STACK_TRACE } from './support/built-cli.js';
import { sharedBudgetStores } from './support/cost.js';
import { demoOf, reseed, type Demo } from './support/demo.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';

// `pnpm latchkey budget show|reset --email E`, the built CLI reading the buckets a running server shares (in
// PostgreSQL, or in Redis with REDIS_URL), and what it answers on the embedded database, where they are the
// server's memory.

requireBuild();

const BUDGETS = {
  guest: { capacity: 50, restorePerSecond: 1 },
  plans: { FREE: { capacity: 1000, restorePerSecond: 0.5 }, PRO: { capacity: 5000, restorePerSecond: 1 } },
};
/** About 200 points estimated: more than the slice (a twentieth of the bucket) an instance holds. */
const PAGE = '{ documents(first: 100) { edges { node { id title } } } b: documents(first: 100) { edges { node { id } } } }';

const workDir = testTempDir('budget-cli');
const budgetFile = join(workDir, 'budgets.json');
writeFileSync(budgetFile, JSON.stringify(BUDGETS));

describe('the operator CLI and the budgets', () => {
  it('bad input exits 2 with a message and no stack trace, before anything is opened', async () => {
    const env = { DATA_DIR: `${workDir}/unused`, NODE_ENV: 'test' };
    for (const args of [
      ['budget'],
      ['budget', 'frobnicate'],
      ['budget', 'show'],
      ['budget', 'reset', '--email', ''],
      ['budget', 'show', '--email', 'a@b.test', '--all'],
    ]) {
      const result = await run(CLI, args, env, workDir);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).not.toMatch(STACK_TRACE);
    }
  });

  it('on the embedded database it says the buckets are the server memory, and how to see or reset them', async () => {
    const result = await run(
      CLI,
      ['budget', 'show', '--email', 'carol@globex.test'],
      { DATA_DIR: `${workDir}/embedded`, NODE_ENV: 'test' },
      workDir,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("the buckets live in the running server's memory");
    expect(result.stderr).toContain('rateLimit');
    expect(result.stderr).not.toMatch(STACK_TRACE);
  });
});

const stores = sharedBudgetStores();

describe.runIf(onPostgres('the PostgreSQL-only tests')).each(stores)(
  'budget show and reset beside a running server (%s)',
  (_store, extra) => {
    let service: TestService;
    let demo: Demo;
    let env: Record<string, string | undefined>;
    beforeAll(async () => {
      service = await startTestService({ API_BUDGET_FILE: budgetFile, ...extra });
      await reseed(service.database);
      demo = await demoOf(service);
      env = { NODE_ENV: 'test', DATA_DIR: workDir, DATABASE_URL: service.config.database.url, API_BUDGET_FILE: budgetFile, ...extra };
    });
    afterAll(() => service?.close());

    const show = async (email: string) => {
      const result = await run(CLI, ['budget', 'show', '--email', email], env, workDir);
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as Record<string, unknown>;
    };

    it('shows what the shared bucket holds (what the instances have not reserved), and reset fills it', async () => {
      const token = await demo.token('carol');
      const spentAt = performance.now();
      const spent = await postGraphQL(service.graphqlUrl, { query: PAGE }, { token });
      expect(spent.json.errors).toBeUndefined();
      const { actualQueryCost } = spent.json.extensions.cost;
      const before = await show('carol@globex.test');
      expect(before).toMatchObject({ email: 'carol@globex.test', plan: 'FREE', maximumAvailable: 1000, restoreRate: 0.5 });
      expect(before['store']).toBe('REDIS_URL' in extra ? 'redis' : 'postgres');
      // Spent: the operation's actual cost, and what the instance still holds of its slice.
      expect(before['currentlyAvailable']).toBeLessThan(1000);
      const refilled = (BUDGETS.plans.FREE.restorePerSecond * (performance.now() - spentAt)) / 1000;
      expect(before['currentlyAvailable']).toBeLessThanOrEqual(1000 - actualQueryCost + refilled);

      const reset = await run(CLI, ['budget', 'reset', '--email', 'carol@globex.test'], env, workDir);
      expect(reset.code, reset.stderr).toBe(0);
      expect(reset.stdout).toBe('carol@globex.test: the budget is full again\n');
      expect((await show('carol@globex.test'))['currentlyAvailable']).toBe(1000);
      expect(await show('alice@acme.test')).toMatchObject({ plan: 'PRO', maximumAvailable: 5000, currentlyAvailable: 5000 });
    });

    it('an unknown e-mail exits 4', async () => {
      expect((await run(CLI, ['budget', 'show', '--email', 'nobody@example.test'], env, workDir)).code).toBe(4);
    });
  },
);
