import { expect } from 'vitest';
import { onPostgres, redisForTests, statementsDuring } from '@latchkey/db/testing';

/**
 * The `extensions` every GraphQL response carries besides what a test compares: the caller's budget
 * (docs/graphql.md, "Budgets"), whose figures the budget tests check.
 */
export const COST_REPORTED = {
  cost: expect.objectContaining({ requestedQueryCost: expect.any(Number), throttleStatus: expect.any(Object) }),
};

/**
 * The budgets' own statements: the plan look-up (one per caller and 5 seconds, read before an operation is admitted)
 * and, on PostgreSQL, the shared buckets (a slice reserved per twentieth of a bucket, given back when idle).
 */
const BUDGET_STATEMENTS = /^select distinct "organizations"\."plan" from "memberships"|\bapi_budgets\b/i;

/**
 * The statements a request sends for what it asks (`statementsDuring`), the budgets' own left out: whether a request
 * sends them depends on the clock and on what came before, not on the request.
 */
export async function requestStatementsDuring<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const { result, statements } = await statementsDuring(run);
  return { result, statements: statements.filter((sql) => !BUDGET_STATEMENTS.test(sql.trim())) };
}

/**
 * Where the shared buckets of a PostgreSQL run live, as `describe.each` rows: PostgreSQL, and Redis when the tests
 * have one (`REDIS_URL`, on the Redis database `redisDatabase` when given: a file's own guests' buckets).
 */
export function sharedBudgetStores(redisDatabase?: number) {
  const redisUrl = onPostgres('the PostgreSQL-only tests') ? redisForTests('the budgets shared in Redis') : undefined;
  if (!redisUrl) return [['PostgreSQL', {}]] as const;
  const url = new URL(redisUrl);
  if (redisDatabase !== undefined) url.pathname = `/${redisDatabase}`;
  return [
    ['PostgreSQL', {}],
    ['Redis', { REDIS_URL: redisDatabase === undefined ? redisUrl : url.toString() }],
  ] as const;
}
