// `pnpm chaos`: what the service does when its environment misbehaves, as figures (not a test): database
// outages under load (refused/reset and black-holed), a real PostgreSQL restart (a private cluster stopped and
// started under load: how soon /readyz and the first query succeed), events across a database restart, a deploy's SIGTERM under keep-alive write load, rate limits
// and discovery behind a real reverse proxy (nginx). Real api
// processes in production mode on PostgreSQL (DATABASE_URL, default the local server), faults made by a TCP
// proxy in front of the database. Prints a table and writes chaos-results/latest.json.
//
// Env: CHAOS_ONLY=outage-drop,outage-blackhole,pg-restart,restart,shutdown,proxy (subset), CHAOS_OUTAGE_SECONDS (10),
//      CHAOS_RESTART_SECONDS (2), CHAOS_PG_STOPPED_SECONDS (8).
import { mkdir, writeFile } from 'node:fs/promises';
import { outageScenario } from './outage.js';
import { pgRestartScenario } from './pg-restart.js';
import { proxyScenario } from './proxy.js';
import { restartScenario } from './restart.js';
import { shutdownScenario } from './shutdown.js';

process.env['DATABASE_URL'] ??= 'postgres://postgres@127.0.0.1:5432/postgres';
const outageSeconds = Number(process.env['CHAOS_OUTAGE_SECONDS'] ?? 10);

const SCENARIOS: Record<string, () => Promise<object>> = {
  'outage-drop': () => outageScenario('drop', outageSeconds),
  'outage-blackhole': () => outageScenario('blackhole', outageSeconds),
  'pg-restart': () => pgRestartScenario(Number(process.env['CHAOS_PG_STOPPED_SECONDS'] ?? 8)),
  restart: () => restartScenario(Number(process.env['CHAOS_RESTART_SECONDS'] ?? 2)),
  shutdown: async () => [await shutdownScenario(true), await shutdownScenario(false)],
  proxy: proxyScenario,
};

const only = (process.env['CHAOS_ONLY'] ?? Object.keys(SCENARIOS).join(','))
  .split(',')
  .map((name) => name.trim())
  .filter(Boolean);
const unknown = only.filter((name) => !(name in SCENARIOS));
if (unknown.length > 0) {
  process.stderr.write(`chaos: unknown scenario ${unknown.join(', ')} (known: ${Object.keys(SCENARIOS).join(', ')})\n`);
  process.exit(2);
}

const results: object[] = [];
for (const name of only) {
  process.stderr.write(`chaos: ${name} ...\n`);
  const figures = await SCENARIOS[name]!();
  for (const entry of [figures].flat()) {
    results.push(entry);
    process.stdout.write(`\n${(entry as { scenario: string }).scenario}\n`);
    for (const [key, value] of Object.entries(entry))
      if (key !== 'scenario') process.stdout.write(`  ${key.padEnd(24)} ${String(value)}\n`);
  }
}
await mkdir('chaos-results', { recursive: true });
await writeFile(
  'chaos-results/latest.json',
  `${JSON.stringify({ at: new Date().toISOString(), node: process.version, results }, null, 2)}\n`,
);
