import { pairedServerCpu, scenario, scenarioWithBody, type Scenario, type Summary } from './load.js';
import type { Server } from './servers.js';
import { DASHBOARD_QUERY } from './settings.js';

// BENCH_DEPRECATIONS=compare: what the deprecation report (`extensions.deprecated`) and the counting of each use cost.
// The bench's documents selecting the deprecated `Status.time` against the same selecting `Status.serverTime`, on
// one server with metrics on (every use counted, the database record written once a minute per pair), alternated
// round by round in one run: status as a guest (client `unknown`) and the dashboard as alice (her token's client).

const WITH = ', deprecated field';
const WITHOUT = ', no deprecated field';
/** The document without, sent as a scenario of its own: the same against the same, the run's noise. */
const AGAIN = ', no deprecated field again';

/** The two sides of each comparison, on one server. */
export function deprecationScenarios(server: Server, aliceToken: string, pinnedId: string): Scenario[] {
  const dashboard = (query: string) => ({ query, variables: { organization: 'acme', pinned: pinnedId } });
  const deprecatedDashboard = DASHBOARD_QUERY.replace(/\bserverTime\b/, 'time');
  if (deprecatedDashboard === DASHBOARD_QUERY) throw new Error('the dashboard no longer selects Status.serverTime: no document to compare');
  return [
    scenario(`status${WITH}`, server, '{ status { version time } }'),
    scenario(`status${WITHOUT}`, server, '{ status { version serverTime } }'),
    scenario(`status${AGAIN}`, server, '{ status { version serverTime } }'),
    scenarioWithBody(`dashboard text${WITH}`, server, dashboard(deprecatedDashboard), aliceToken),
    scenarioWithBody(`dashboard text${WITHOUT}`, server, dashboard(DASHBOARD_QUERY), aliceToken),
  ];
}

/** Whether the server reports the deprecated side as such: a run that measured no report would compare nothing. */
export async function checkReported(scenarios: Scenario[]): Promise<void> {
  for (const s of scenarios.filter((each) => each.name.endsWith(WITH))) {
    const answer = (await (await fetch(s.server.url, { method: 'POST', headers: s.headers, body: s.body })).json()) as {
      extensions?: { deprecated?: unknown[] };
    };
    if (!answer.extensions?.deprecated?.length) throw new Error(`scenario "${s.name}": no extensions.deprecated in its answer`);
  }
}

export interface DeprecationCost {
  scenario: string;
  /** what is compared with what */
  ratio: string;
  /** server CPU per request, with / without the deprecated field: of the medians, the rounds paired in order, and the 90% interval */
  serverCpu: { median: number; low: number; high: number; interval: [number, number] };
  /** server CPU per request, ms: with the deprecated field, and without */
  cpuMs: { deprecated: number; plain: number };
}

/** Per document: CPU per request with the deprecated field against without; and status without against itself (noise). */
export function compareDeprecations(summaries: Summary[]): DeprecationCost[] {
  const pair = (scenario: string, one: Summary, other: Summary, ratio = 'deprecated field / none'): DeprecationCost => ({
    scenario,
    ratio,
    serverCpu: pairedServerCpu(one, other),
    cpuMs: { deprecated: one.serverCpuMs, plain: other.serverCpuMs },
  });
  const costs = summaries
    .filter((s) => s.scenario.endsWith(WITH))
    .map((deprecated) => {
      const name = deprecated.scenario.slice(0, -WITH.length);
      return pair(name, deprecated, summaries.find((s) => s.scenario === `${name}${WITHOUT}`)!);
    });
  const again = summaries.find((s) => s.scenario === `status${AGAIN}`)!;
  return [
    ...costs,
    pair('status, the same document twice', again, summaries.find((s) => s.scenario === `status${WITHOUT}`)!, 'noise, one / other'),
  ];
}

/** How many uses the server counted (its metrics, scraped at the end): a run that counted none measured nothing. */
export async function usesCounted(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return [...text.matchAll(/^latchkey_deprecated_uses_total\{[^}]*\} (\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
}
