import { connect } from 'node:net';
import { pairedServerCpu, type Summary } from './load.js';
import { log } from './report.js';
import { BENCH_REDIS_URL } from './settings.js';

// BENCH_BUDGETS=compare: what the budgets cost, measured as the issue of fair use asks: budgets off against on (with
// a file that never refuses), their buckets in PostgreSQL (memory on the embedded database) and in Redis, the same
// scenarios alternated round by round in one run.

/** The settings compared: each a latchkey server of its own. */
export interface BudgetSetting {
  label: string;
  env: Record<string, string>;
}

/** Whether something accepts connections at the Redis URL's host and port. */
function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function budgetSettings(): Promise<BudgetSetting[]> {
  const settings: BudgetSetting[] = [
    { label: 'budgets off', env: { API_BUDGET: 'off' } },
    { label: process.env.DATABASE_URL ? 'budgets in postgres' : 'budgets in memory', env: {} },
  ];
  if (await answers(BENCH_REDIS_URL)) settings.push({ label: 'budgets in redis', env: { REDIS_URL: BENCH_REDIS_URL } });
  else log(`bench: no Redis at ${BENCH_REDIS_URL} (BENCH_REDIS_URL): the Redis buckets are not measured`);
  return settings;
}

export interface BudgetCost {
  scenario: string;
  setting: string;
  /** server CPU per request, on / off: of the medians, and the lowest and highest of the rounds paired in order */
  serverCpu: { median: number; low: number; high: number };
  /** the database backends' CPU per request added, ms (PostgreSQL only; off, status and viewer use none) */
  databaseCpuMsAdded: number | null;
}

/** Per scenario and setting: CPU per request against budgets off, with the spread of the paired rounds. */
export function compareBudgets(summaries: Summary[]): BudgetCost[] {
  const costs: BudgetCost[] = [];
  for (const off of summaries.filter((s) => s.scenario.endsWith(', budgets off'))) {
    const name = off.scenario.slice(0, -', budgets off'.length);
    for (const on of summaries.filter((s) => s.scenario.startsWith(`${name}, budgets in `))) {
      costs.push({
        scenario: name,
        setting: on.scenario.slice(name.length + 2),
        serverCpu: pairedServerCpu(on, off),
        databaseCpuMsAdded: on.databaseCpuMs !== null && off.databaseCpuMs !== null ? on.databaseCpuMs - off.databaseCpuMs : null,
      });
    }
  }
  return costs;
}
