import type { Plan } from '@latchkey/db';
import { z } from 'zod';
import { ConfigError } from './error.js';
import { readConfigFile } from './files.js';

/**
 * The fair-use budgets: per caller, a bucket of cost points that refills continuously (see bucket.ts). API_BUDGET
 * switches them on or off; API_BUDGET_FILE sizes them, checked at start-up like AUTH_POLICY_FILE.
 */

/** One bucket: what a caller may spend at once (`capacity`) and how fast it refills (`restorePerSecond`). */
export interface BucketSize {
  capacity: number;
  restorePerSecond: number;
}

export interface BudgetSettings {
  /** API_BUDGET: whether operations are charged against the buckets at all */
  enabled: boolean;
  /** callers who are not signed in */
  guest: BucketSize;
  plans: Record<Plan, BucketSize>;
}

/**
 * The sizes without API_BUDGET_FILE: each bucket holds 10 s of its refill. The demo, the tour and an interactive
 * client are never refused (the demo's heaviest operation, its list of 20 documents, costs 205 points), while a loop
 * of 5,000-point operations from one caller is refused within a second: at once as a guest (beyond its capacity),
 * after 5 back to back on FREE, after about 20 on PRO.
 */
export const DEFAULT_BUDGETS: Omit<BudgetSettings, 'enabled'> = {
  guest: { capacity: 2000, restorePerSecond: 200 },
  plans: {
    FREE: { capacity: 25_000, restorePerSecond: 2500 },
    PRO: { capacity: 100_000, restorePerSecond: 10_000 },
  },
};

const FILE = 'API_BUDGET_FILE';

// A missing figure is told apart from a wrong one: both stop start-up, the message says which fix is needed.
const missingOr = (wrong: string) => (issue: { input: unknown }) => (issue.input === undefined ? 'is missing' : wrong);
const figure = z.number({ error: missingOr('must be a positive number') }).positive({ error: 'must be a positive number' });
const bucketSize = z.object({ capacity: figure, restorePerSecond: figure }, { error: missingOr('must be an object') }).strict();
const budgetFile = z
  .object(
    { guest: bucketSize, plans: z.object({ FREE: bucketSize, PRO: bucketSize }, { error: missingOr('must be an object') }).strict() },
    { error: 'must be a JSON object' },
  )
  .strict();

/** The keys an object of the file may have, by its path: what an unknown key's message offers instead. */
function knownKeys(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'guest, plans';
  if (path.length === 1 && path[0] === 'plans') return 'FREE, PRO';
  return 'capacity, restorePerSecond';
}

/** One line per fault, each naming the key path it is about (`plans.FREE.capacity must be a positive number`). */
function faults(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => `${[...issue.path, key].join('.')} is not a known key (${knownKeys(issue.path)})`);
    }
    return [issue.path.length === 0 ? issue.message : `${issue.path.join('.')} ${issue.message}`];
  });
}

function invalid(lines: string[]): ConfigError {
  return new ConfigError(`invalid configuration:\n${lines.map((line) => `  ${line}`).join('\n')}`);
}

/** The bucket sizes of API_BUDGET_FILE's text: every fault at once, or a ConfigError naming each key path. */
function parseBudgetFile(text: string): Omit<BudgetSettings, 'enabled'> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalid([`${FILE}: not valid JSON`]);
  }
  const parsed = budgetFile.safeParse(json);
  if (!parsed.success) throw invalid(faults(parsed.error.issues).map((fault) => `${FILE}: ${fault}`));
  return parsed.data;
}

/**
 * API_BUDGET (`on`, the default, or `off`) and API_BUDGET_FILE (the sizes; DEFAULT_BUDGETS without it). The file
 * is checked whenever it is set, even with API_BUDGET=off: a typo should not wait for the day the budget is
 * turned on. `readFile` reads it (injected, as every file of the configuration; without it a set file is refused).
 */
export function readBudgetSettings(
  value: string | undefined,
  file: string | undefined,
  readFile?: (path: string) => string,
): BudgetSettings {
  if (value !== undefined && value !== 'on' && value !== 'off') throw invalid([`API_BUDGET: must be on or off, not "${value}"`]);
  const sizes = file ? parseBudgetFile(readConfigFile(FILE, file, readFile)) : DEFAULT_BUDGETS;
  return { enabled: value !== 'off', guest: { ...sizes.guest }, plans: { FREE: { ...sizes.plans.FREE }, PRO: { ...sizes.plans.PRO } } };
}
