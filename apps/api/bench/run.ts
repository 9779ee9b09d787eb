// `pnpm bench`: throughput/latency of latchkey's GraphQL endpoint against three
// baselines, a stock graphql-yoga server (what yoga gives by default), the Yoga
// floor (Yoga set up as latchkey's, answering without executing: the ceiling for
// any server built on Yoga) and a raw node:http server (the ceiling for any Node
// server on this machine).
//
// Each server is a separate child process pinned to CPU 0 and the load
// generator (autocannon, in this process) is pinned to CPU 1, so the server
// never competes with the load generator for a core and runs are comparable.
// On PostgreSQL the database backends serving latchkey join the load generator
// on CPU 1 during each load (BENCH_PIN_DATABASE=0: left to the scheduler).
//
// Env: BENCH_CONNECTIONS (50), BENCH_DURATION (s, 5), BENCH_ROUNDS (5),
//      BENCH_WARMUP (s per server, 10: stock Yoga keeps speeding up for ~10 s),
//      BENCH_ONLY=latchkey,stock-yoga,yoga-floor,raw-node (subset of servers),
//      BENCH_METRICS=compare (instead: two latchkey servers, metrics off and on
//      (METRICS_PORT), alternated round by round on the same scenarios; prints
//      on/off per scenario),
//      BENCH_BUDGETS=compare (instead: latchkey with budgets off, and on with a file that never refuses, their
//      buckets in PostgreSQL (memory on PGlite) and in Redis (BENCH_REDIS_URL, default redis://127.0.0.1:6379,
//      left out when nothing answers there), alternated round by round on status, viewer and documents; prints
//      on / off CPU per request per scenario with the spread of the paired rounds),
//      BENCH_DEPRECATIONS=compare (instead: one latchkey with metrics on, the status and dashboard documents selecting
//      the deprecated Status.time against the same selecting Status.serverTime, alternated round by round; prints
//      with / without CPU per request per document with the paired rounds' interval, and status against itself: the noise),
//      BENCH_COMPARE_BUILD=<another checkout's apps/api/dist> (instead: this build and that one, both under the
//      same scenario at the same time, sharing CPU 0, so the machine's swings fall on both alike; which load starts
//      first alternates round by round; on status, viewer, documents and the dashboard as text; prints this/other
//      per scenario, server CPU per request paired round by round: what a change costs, measured in one run;
//      BENCH_COMPARE_SWAP=1 starts the other build first, for the second of the two runs a comparison needs),
//      DATABASE_URL (set: latchkey runs on a new `latchkey_bench` database on that PostgreSQL server, and the
//      report adds the database backends' CPU per request; unset: a fresh PGlite DATA_DIR). Either way the
//      database is seeded with `pnpm latchkey seed --bench` (100,000 documents),
//      BENCH_SERVER_LOGS=1 (show latchkey's own output, to debug its startup).
//
// The parts: harness/settings.ts (these settings, the operations), harness/processes.ts (pinning, children),
// harness/servers.ts (starting each server), harness/load.ts (scenarios, checks, timed loads),
// harness/parse-cost.ts and harness/report.ts (stdout, stderr and bench-results/latest.json).
import { constants as osConstants } from 'node:os';
import { check, load, rssMiB, scenario, scenarioWithBody, summarize, type Sample, type Scenario } from './harness/load.js';
import { budgetSettings, compareBudgets } from './harness/budgets.js';
import { checkReported, compareDeprecations, deprecationScenarios, usesCounted } from './harness/deprecations.js';
import { parseAndValidateMicros } from './harness/parse-cost.js';
import { canPin, freePort, pinDatabase, pinned, reexecPinned, sleep, stopAll, stopping } from './harness/processes.js';
import { compareMetrics, fmt, log, report } from './harness/report.js';
import { closeDatabases, startBaseline, startLatchkey, THIS_BUILD, type Server } from './harness/servers.js';
import {
  COMPARE_BUDGETS,
  COMPARE_BUILD,
  COMPARE_DEPRECATIONS,
  COMPARE_METRICS,
  COMPARE_SWAPPED,
  CONNECTIONS,
  DASHBOARD_HASH,
  DASHBOARD_QUERY,
  DOCUMENTS_QUERY,
  DURATION_S,
  ROUNDS,
  selectedServers,
  STATUS_QUERY,
  VIEWER_QUERY,
  SETTLE_S,
  WARMUP_S,
} from './harness/settings.js';

/** BENCH_COMPARE_BUILD: each scenario of the build started first beside the same one of the other (listed in that order). */
function sideBySide(scenarios: Scenario[]): Scenario[][] {
  const half = scenarios.length / 2;
  return scenarios.slice(0, half).map((s, i) => [s, scenarios[half + i]!]);
}

async function main(): Promise<void> {
  const only = selectedServers();
  log(
    `bench: ${CONNECTIONS} connections, ${DURATION_S} s x ${ROUNDS} rounds, ` +
      (pinned
        ? `servers on CPU 0, autocannon on CPU 1${pinDatabase ? ' (and PostgreSQL backends, when used)' : ''}`
        : 'NOT pinned (needs taskset and 2 CPUs)'),
  );

  // Start everything first: rounds alternate between servers, so all stay up.
  const servers: Server[] = [];
  const scenarios: Scenario[] = [];
  let metricsUrl: string | undefined;
  if (COMPARE_BUILD) {
    // Two builds of latchkey (this checkout's and another's), loaded together scenario by scenario: what a change costs.
    const builds = [
      ['this', THIS_BUILD],
      ['other', COMPARE_BUILD],
    ] as const;
    for (const [label, build] of COMPARE_SWAPPED ? [...builds].reverse() : builds) {
      const started = await startLatchkey(`latchkey (${label} build)`, {}, build, label);
      servers.push(started.server);
      scenarios.push(
        scenario(`status, ${label} build`, started.server, STATUS_QUERY),
        scenario(`viewer, ${label} build`, started.server, VIEWER_QUERY, started.token),
        scenario(`documents(first: 20), ${label} build`, started.server, DOCUMENTS_QUERY, started.aliceToken),
        scenarioWithBody(
          `dashboard text, ${label} build`,
          started.server,
          { query: DASHBOARD_QUERY, variables: { organization: 'acme', pinned: started.pinnedId } },
          started.aliceToken,
        ),
      );
    }
  } else if (COMPARE_BUDGETS) {
    // Budgets off, and on with their buckets where a deployment keeps them, alternated: what fair use costs.
    for (const setting of await budgetSettings()) {
      const started = await startLatchkey(`latchkey (${setting.label})`, setting.env, undefined, setting.label);
      servers.push(started.server);
      scenarios.push(
        scenario(`status, ${setting.label}`, started.server, STATUS_QUERY),
        scenario(`viewer, ${setting.label}`, started.server, VIEWER_QUERY, started.token),
        scenario(`documents(first: 20), ${setting.label}`, started.server, DOCUMENTS_QUERY, started.aliceToken),
      );
    }
  } else if (COMPARE_DEPRECATIONS) {
    // One server, metrics on (each use counted): the same documents with and without a deprecated field, alternated.
    const started = await startLatchkey('latchkey (metrics on)', { METRICS_PORT: String(await freePort()) }, undefined, 'deprecations');
    servers.push(started.server);
    metricsUrl = started.metricsUrl;
    scenarios.push(...deprecationScenarios(started.server, started.aliceToken, started.pinnedId));
    await checkReported(scenarios);
  } else if (COMPARE_METRICS) {
    // The same server twice, without and with METRICS_PORT: what collecting metrics costs, alternated in one run.
    for (const setting of ['off', 'on'] as const) {
      const started = await startLatchkey(
        `latchkey (metrics ${setting})`,
        setting === 'on' ? { METRICS_PORT: String(await freePort()) } : {},
        undefined,
        `metrics_${setting}`,
      );
      servers.push(started.server);
      metricsUrl ??= started.metricsUrl;
      scenarios.push(
        scenario(`status, metrics ${setting}`, started.server, STATUS_QUERY),
        scenario(`viewer, metrics ${setting}`, started.server, VIEWER_QUERY, started.token),
        scenario(`documents(first: 20), metrics ${setting}`, started.server, DOCUMENTS_QUERY, started.aliceToken),
      );
    }
  } else if (only.has('latchkey')) {
    const { server, token, aliceToken, pinnedId, deepCursor } = await startLatchkey();
    servers.push(server);
    const variables = { organization: 'acme', pinned: pinnedId };
    scenarios.push(
      scenario('latchkey status', server, STATUS_QUERY),
      scenario('latchkey viewer', server, VIEWER_QUERY, token),
      scenario('latchkey documents(first: 20)', server, DOCUMENTS_QUERY, aliceToken),
      scenarioWithBody(
        'latchkey documents(first: 20), 1,000 rows in',
        server,
        { query: DOCUMENTS_QUERY, variables: { after: deepCursor } },
        aliceToken,
      ),
      scenarioWithBody(
        `latchkey dashboard text (${(DASHBOARD_QUERY.length / 1024).toFixed(1)} KB)`,
        server,
        { query: DASHBOARD_QUERY, variables },
        aliceToken,
      ),
      scenarioWithBody(
        'latchkey dashboard persisted (hash)',
        server,
        { variables, extensions: { persistedQuery: { version: 1, sha256Hash: DASHBOARD_HASH } } },
        aliceToken,
      ),
    );
  }
  for (const name of ['stock-yoga', 'yoga-floor', 'raw-node'] as const) {
    if (COMPARE_METRICS || COMPARE_BUILD || COMPARE_BUDGETS || COMPARE_DEPRECATIONS || !only.has(name)) continue;
    const server = await startBaseline(name);
    servers.push(server);
    scenarios.push(scenario(`${name} status`, server, STATUS_QUERY));
  }
  log(`started: ${servers.map((s) => `${s.name} (pid ${s.child.pid})`).join(', ')}`);

  for (const s of scenarios) await check(s);

  // Warm-up: let the JIT and caches settle so round 1 is not an outlier.
  for (const server of servers) {
    log(`warm-up ${server.name} (${WARMUP_S} s)`);
    await load(
      server,
      scenarios.filter((s) => s.server === server),
      WARMUP_S,
    );
  }

  // Round-robin: every round runs each scenario once, so slow drift (thermal,
  // noisy neighbours) hits all scenarios alike; the start rotates per round so
  // no scenario always runs right after the same other one.
  const samples = new Map<Scenario, Sample[]>(scenarios.map((s) => [s, []]));
  // Each server's memory right after its own last load: read at the end of the run instead, a server whose
  // scenarios ended early has had time to collect its garbage and would be compared with one just loaded.
  const rssAfterLoad = new Map<string, number | null>();
  const groups = COMPARE_BUILD ? sideBySide(scenarios) : scenarios.map((s) => [s]);
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < groups.length; i++) {
      const group = groups[(i + round) % groups.length]!;
      // Loads run together start in turn: the first to start was seen to be charged about 4% more, whatever its build.
      const ordered = round % 2 === 0 ? group : [...group].reverse();
      const measured = await Promise.all(ordered.map((s) => load(s.server, [s], DURATION_S)));
      ordered.forEach((s, k) => {
        const sample = measured[k]!;
        rssAfterLoad.set(s.server.name, rssMiB(s.server.child.pid));
        samples.get(s)!.push(sample);
        log(
          `round ${round + 1}/${ROUNDS}  ${s.name.padEnd(18)} ${fmt(sample.reqPerSec, 0).padStart(7)} req/s  ` +
            `p50 ${fmt(sample.p50)} ms  p99 ${fmt(sample.p99)} ms  server CPU ${fmt(sample.serverCpuMs, 3)} ms/req  ` +
            `non-2xx ${sample.non2xx}  errors ${sample.errors}`,
        );
      });
      await sleep(500); // let the previous run's sockets close before the next one
    }
  }

  const summaries = scenarios.map((s) => summarize(s, samples.get(s)!));
  const afterLoad = Object.fromEntries(servers.map((s) => [s.name, rssAfterLoad.get(s.name) ?? null]));
  // And once V8's memory reducer has collected what the load left (it runs after some seconds of low allocation).
  log(`resident memory: waiting ${SETTLE_S} s for every server to settle`);
  await sleep(SETTLE_S * 1000);
  const settled = Object.fromEntries(servers.map((s) => [s.name, rssMiB(s.child.pid)]));
  const rss = { afterLoad, settled };
  const comparing = COMPARE_METRICS || COMPARE_BUILD || COMPARE_BUDGETS || COMPARE_DEPRECATIONS;
  const micro = only.has('latchkey') && !comparing ? parseAndValidateMicros() : undefined;
  const metricsCost = COMPARE_METRICS ? await compareMetrics(summaries, metricsUrl!) : undefined;
  const budgetCost = COMPARE_BUDGETS ? compareBudgets(summaries) : undefined;
  const deprecationCost = COMPARE_DEPRECATIONS
    ? { documents: compareDeprecations(summaries), usesCounted: await usesCounted(metricsUrl!) }
    : undefined;
  await report({ summaries, rss, micro, metricsCost, budgetCost, deprecationCost });
}

// ---------------------------------------------------------------- entry

if (process.env.BENCH_PINNED === undefined && canPin()) {
  reexecPinned();
} else {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      // Ctrl-C can arrive twice (from the terminal and forwarded by the pinning parent).
      if (stopping) return;
      process.stderr.write(`\n${sig}: stopping servers\n`);
      void stopAll().finally(() => process.exit(128 + osConstants.signals[sig]));
    });
  }
  main()
    .then(() => stopAll())
    .then(() => closeDatabases())
    .then(() => process.exit(0))
    .catch(async (err: unknown) => {
      process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
      await stopAll();
      await closeDatabases().catch(() => {});
      process.exit(1);
    });
}
