import { expect } from 'vitest';
import { statementsDuring } from '@latchkey/db/testing';

/**
 * The `extensions` every GraphQL response carries besides what a test compares: the caller's budget
 * (docs/graphql.md, "Budgets"), whose figures the budget tests check.
 */
export const COST_REPORTED = {
  cost: expect.objectContaining({ requestedQueryCost: expect.any(Number), throttleStatus: expect.any(Object) }),
};

/** The budgets' plan look-up: one statement per caller and 5 seconds, read before an operation is admitted. */
const PLAN_LOOKUP = /^select distinct "organizations"\."plan" from "memberships"/i;

/**
 * The statements a request sends for what it asks (`statementsDuring`), the budgets' plan look-up left out: it is
 * read once per caller and 5 seconds, so whether a request sends it depends on the clock, not on the request.
 */
export async function requestStatementsDuring<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const { result, statements } = await statementsDuring(run);
  return { result, statements: statements.filter((sql) => !PLAN_LOOKUP.test(sql.trim())) };
}
