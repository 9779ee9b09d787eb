import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { onPostgres, testTempDir } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireBuild, run } from './support/built-cli.js';
import { demoOf, reseed, type Demo } from './support/demo.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';

// `pnpm latchkey plan` beside a running server: the built CLI changes the plan in the server's database, and the
// server's budgets follow through their plan look-up (docs/graphql.md, "Budgets"), never through the token.

requireBuild();

// Sizes no other file uses, so the answer can only come from this file's budget file.
const BUDGETS = {
  guest: { capacity: 50, restorePerSecond: 10 },
  plans: { FREE: { capacity: 321, restorePerSecond: 100 }, PRO: { capacity: 4321, restorePerSecond: 100 } },
};
/** How long the budgets' plan look-up believes a plan it read (`createPlanLookup`, apps/api/src/budget/plans.ts). */
const PLAN_LOOKUP_TTL_MS = 5000;
const RATE_LIMIT = '{ rateLimit { maximumAvailable plan } }';

// The CLI and the server share a database only on PostgreSQL (a PGlite directory belongs to one process).
describe.runIf(onPostgres('the PostgreSQL-only tests'))('a plan change beside a running server', () => {
  let service: TestService;
  let demo: Demo;
  let env: Record<string, string | undefined>;
  const workDir = testTempDir('plan-change');

  beforeAll(async () => {
    const file = join(workDir, 'budgets.json');
    writeFileSync(file, JSON.stringify(BUDGETS));
    service = await startTestService({ API_BUDGET_FILE: file });
    await reseed(service.database);
    demo = await demoOf(service);
    env = { NODE_ENV: 'test', DATA_DIR: join(workDir, 'cli-data'), DATABASE_URL: service.config.database.url };
  });
  afterAll(() => service?.stop());

  /** The caller's budget as the server sizes it now, by Query.rateLimit (which charges nothing) and extensions.cost. */
  async function budgetOf(token: string): Promise<{ maximumAvailable: number; plan: string; reported: number }> {
    const answer = await postGraphQL(service.graphqlUrl, { query: RATE_LIMIT }, { token });
    expect(answer.json.errors).toBeUndefined();
    return { ...answer.json.data.rateLimit, reported: answer.json.extensions.cost.throttleStatus.maximumAvailable };
  }

  it("a plan change applies within the plan look-up's delay without a new token", async () => {
    const token = await demo.token('carol'); // ADMIN of globex, a FREE organization, and of no other
    expect(await budgetOf(token)).toEqual({ maximumAvailable: 321, plan: 'FREE', reported: 321 });
    // The plan was read before that answer came back: believed until at most PLAN_LOOKUP_TTL_MS from now.
    const believedUntil = Date.now() + PLAN_LOOKUP_TTL_MS;

    const changed = await run(CLI, ['plan', '--organization', 'globex', 'PRO'], env, workDir);
    const exited = Date.now();
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stderr).toBe('globex: FREE -> PRO\n');

    // The same token throughout: only the plan look-up can resize its bucket. Bounded by the test's timeout alone.
    // Query.rateLimit's figures come from one look-up; extensions.cost's from the operation's own, which may fall on
    // the other side of the moment the plan is read again: it is compared once the look-up holds PRO.
    // Every operation that starts once the change is committed and the old read has expired is sized by PRO: an order
    // of events, not a figure of this machine's speed.
    const mustBePro = Math.max(exited, believedUntil);
    for (;;) {
      const startedAt = Date.now();
      const budget = await budgetOf(token);
      if (budget.maximumAvailable === 4321) {
        expect(budget.plan).toBe('PRO');
        break;
      }
      expect(startedAt, 'an operation started after the look-up expired was still sized FREE').toBeLessThan(mustBePro);
      expect({ maximumAvailable: budget.maximumAvailable, plan: budget.plan }).toEqual({ maximumAvailable: 321, plan: 'FREE' });
      await delay(20);
    }
    expect(await budgetOf(token)).toEqual({ maximumAvailable: 4321, plan: 'PRO', reported: 4321 });
  }, 60_000);
});
