import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BudgetCost } from './budgets.js';
import type { DeprecationCost } from './deprecations.js';
import { pairedServerCpu, type Summary } from './load.js';
import { pinned } from './processes.js';
import { COMPARE_BUILD, COMPARE_SWAPPED, CONNECTIONS, DASHBOARD_QUERY, DURATION_S, ROUNDS, SETTLE_S, WARMUP_S } from './settings.js';

// What a run prints: progress on stderr; on stdout the table, memory and target ratios; and the same as JSON in
// bench-results/latest.json.

export const log = (msg: string) => process.stderr.write(`${msg}\n`);

export function fmt(n: number, digits = 2): string {
  return n.toFixed(digits);
}

export interface RunResults {
  summaries: Summary[];
  /**
   * Resident memory of each server, MiB (null where it cannot be read): right after its own last load, and after
   * BENCH_SETTLE seconds without load at the end of the run.
   */
  rss: { afterLoad: Record<string, number | null>; settled: Record<string, number | null> };
  /** parse and validate of the dashboard text, microseconds (latchkey runs only) */
  micro: { parse: number; validate: number } | undefined;
  /** BENCH_METRICS=compare only */
  metricsCost: Awaited<ReturnType<typeof compareMetrics>> | undefined;
  /** BENCH_BUDGETS=compare only */
  budgetCost?: BudgetCost[] | undefined;
  /** BENCH_DEPRECATIONS=compare only: per document, and the uses the server counted */
  deprecationCost?: { documents: DeprecationCost[]; usesCounted: number } | undefined;
}

/** Prints the report and writes bench-results/latest.json. */
export async function report({ summaries, rss, micro, metricsCost, budgetCost, deprecationCost }: RunResults): Promise<void> {
  const byName = (name: string) => summaries.find((s) => s.scenario === name);
  const ratio = (a: string, b: string) => {
    const x = byName(a);
    const y = byName(b);
    return x && y && y.reqPerSec > 0 ? x.reqPerSec / y.reqPerSec : null;
  };
  const dashboardText = summaries.find((x) => x.scenario.startsWith('latchkey dashboard text'))?.scenario ?? '';
  const ratios = {
    latchkeyStatusVsStockYoga: ratio('latchkey status', 'stock-yoga status'),
    /** the most latchkeyStatusVsStockYoga can be while Yoga serves latchkey (bench/yoga-floor.ts) */
    yogaFloorVsStockYoga: ratio('yoga-floor status', 'stock-yoga status'),
    latchkeyStatusVsYogaFloor: ratio('latchkey status', 'yoga-floor status'),
    latchkeyViewerVsLatchkeyStatus: ratio('latchkey viewer', 'latchkey status'),
    dashboardPersistedVsText: ratio('latchkey dashboard persisted (hash)', dashboardText),
  };

  // Report (stdout): table, memory, target ratios.
  const lines = [
    '| scenario | req/s (median) | x stock-yoga | x raw-node | x status | p50 ms | p99 ms | server CPU ms/req | database CPU ms/req | non-2xx |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const s of summaries) {
    const vs = (base: string) => {
      const r = ratio(s.scenario, base);
      return r === null ? '-' : `${r.toFixed(2)}x`;
    };
    const non2xx = s.non2xx > 0 ? `${s.non2xx} FAILED` : '0';
    lines.push(
      `| ${s.scenario} | ${fmt(s.reqPerSec, 0)} | ${vs('stock-yoga status')} | ${vs('raw-node status')} | ${vs('latchkey status')} ` +
        `| ${fmt(s.p50)} | ${fmt(s.p99)} | ${fmt(s.serverCpuMs, 3)} | ${s.databaseCpuMs === null ? '-' : fmt(s.databaseCpuMs, 3)} | ${non2xx} |`,
    );
  }
  lines.push('');
  for (const s of summaries.filter((x) => x.errors > 0)) {
    lines.push(`note: ${s.scenario} had ${s.errors} connection errors (${s.timeouts} timeouts)`);
  }
  const mib = (value: number | null | undefined) => (value == null ? 'n/a' : `${value.toFixed(1)} MiB`);
  lines.push(`Resident memory (VmRSS), right after each server's last load / after ${SETTLE_S} s without load:`);
  for (const [name, value] of Object.entries(rss.afterLoad)) lines.push(`- ${name}: ${mib(value)} / ${mib(rss.settled[name])}`);
  lines.push('');
  const fmtRatio = (r: number | null) => (r === null ? 'n/a' : `${r.toFixed(2)}x`);
  if (COMPARE_BUILD) {
    lines.push(`(${COMPARE_SWAPPED ? 'the other build' : 'this build'} started first; read with a run the other way round)`);
    for (const s of summaries.filter((x) => x.scenario.endsWith(', this build'))) {
      const name = s.scenario.slice(0, -', this build'.length);
      const other = summaries.find((x) => x.scenario === `${name}, other build`);
      // Requests a second swing with the machine; CPU per request, paired round by round, is the steadier judge.
      const cpu = other ? pairedServerCpu(s, other) : undefined;
      lines.push(
        `${name}: this build / other build = ${fmtRatio(ratio(s.scenario, `${name}, other build`))} requests/s (medians)` +
          (cpu
            ? `; server CPU per request ${fmtRatio(cpu.median)} (medians), paired rounds ${fmtRatio(cpu.low)}-${fmtRatio(cpu.high)}, ` +
              `their median within ${fmtRatio(cpu.interval[0])}-${fmtRatio(cpu.interval[1])} (90%)`
            : ''),
      );
    }
  } else if (budgetCost) {
    for (const { scenario, setting, serverCpu, databaseCpuMsAdded } of budgetCost)
      lines.push(
        `${scenario}: ${setting} / budgets off = ${fmtRatio(serverCpu.median)} server CPU per request ` +
          `(paired rounds ${fmtRatio(serverCpu.low)}-${fmtRatio(serverCpu.high)}; target <= 1.05x)` +
          (databaseCpuMsAdded === null
            ? ''
            : `, database CPU ${databaseCpuMsAdded >= 0 ? '+' : ''}${fmt(databaseCpuMsAdded, 3)} ms per request`),
      );
  } else if (deprecationCost) {
    for (const { scenario, ratio, serverCpu, cpuMs } of deprecationCost.documents)
      lines.push(
        `${scenario}: ${ratio} = ${fmtRatio(serverCpu.median)} server CPU per request ` +
          `(${fmt(cpuMs.deprecated, 3)} / ${fmt(cpuMs.plain, 3)} ms; paired rounds' median within ` +
          `${fmtRatio(serverCpu.interval[0])}-${fmtRatio(serverCpu.interval[1])} (90%), rounds ${fmtRatio(serverCpu.low)}-${fmtRatio(serverCpu.high)}; ` +
          `target: within the run's noise)`,
      );
    lines.push(`the server counted ${deprecationCost.usesCounted} uses (latchkey_deprecated_uses_total)`);
  } else if (metricsCost) {
    for (const { scenario: name, ratio: onOff } of metricsCost.ratios)
      lines.push(`${name}: metrics on / off = ${fmtRatio(onOff)} (target >= 0.95x)`);
    lines.push(`the metrics server counted ${metricsCost.requestsCounted} HTTP requests (latchkey_http_request_duration_seconds_count)`);
  } else {
    lines.push(`latchkey status / stock-yoga = ${fmtRatio(ratios.latchkeyStatusVsStockYoga)} (target >= 3x)`);
    lines.push(
      `yoga-floor / stock-yoga = ${fmtRatio(ratios.yogaFloorVsStockYoga)} (the most latchkey status / stock-yoga can be while Yoga serves it); ` +
        `latchkey status / yoga-floor = ${fmtRatio(ratios.latchkeyStatusVsYogaFloor)}`,
    );
    lines.push(`latchkey viewer / latchkey status = ${fmtRatio(ratios.latchkeyViewerVsLatchkeyStatus)} (target >= 0.9x)`);
    lines.push(
      `latchkey dashboard persisted / text = ${fmtRatio(ratios.dashboardPersistedVsText)} (${DASHBOARD_QUERY.length} bytes of text)`,
    );
  }
  if (micro) {
    lines.push(
      `dashboard parse ${fmt(micro.parse)} us + validate ${fmt(micro.validate)} us per request on a cold cache: what a known persisted id skips`,
    );
  }
  process.stdout.write(`\n${lines.join('\n')}\n`);

  const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url)); // from apps/api/dist/bench/harness/
  const outDir = join(repoRoot, 'bench-results');
  await mkdir(outDir, { recursive: true });
  const report = {
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    config: { connections: CONNECTIONS, durationS: DURATION_S, rounds: ROUNDS, warmupS: WARMUP_S, pinned },
    scenarios: summaries,
    rssMiB: rss,
    ratios,
    dashboard: { bytes: DASHBOARD_QUERY.length, parseAndValidateMicros: micro },
    metricsCost,
    budgetCost,
    deprecationCost,
  };
  await writeFile(join(outDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  log(`results written to ${join(outDir, 'latest.json')}`);
}

/**
 * BENCH_METRICS=compare: on/off per scenario (medians of the alternated rounds), and a scrape of the metrics
 * server, so a run that measured nothing (metrics not actually collected) shows.
 */
export async function compareMetrics(
  summaries: Summary[],
  metricsUrl: string,
): Promise<{ ratios: { scenario: string; ratio: number | null }[]; requestsCounted: number }> {
  const ratios = summaries
    .filter((s) => s.scenario.endsWith(', metrics on'))
    .map((on) => {
      const name = on.scenario.slice(0, -', metrics on'.length);
      const off = summaries.find((s) => s.scenario === `${name}, metrics off`);
      return { scenario: name, ratio: off && off.reqPerSec > 0 ? on.reqPerSec / off.reqPerSec : null };
    });
  const text = await (await fetch(metricsUrl)).text();
  const requestsCounted = [...text.matchAll(/^latchkey_http_request_duration_seconds_count\{[^}]*\} (\d+)/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
  return { ratios, requestsCounted };
}
