// `pnpm bench`: throughput/latency of latchkey's GraphQL endpoint against two
// baselines, a stock graphql-yoga server (what yoga gives by default) and a raw
// node:http server (the ceiling for any Node server on this machine).
//
// Each server is a separate child process pinned to CPU 0 and the load
// generator (autocannon, in this process) is pinned to CPU 1, so the server
// never competes with the load generator for a core and runs are comparable.
//
// Env: BENCH_CONNECTIONS (50), BENCH_DURATION (s, 5), BENCH_ROUNDS (5),
//      BENCH_WARMUP (s per server, 10: stock Yoga keeps speeding up for ~10 s),
//      BENCH_ONLY=latchkey,stock-yoga,raw-node (subset of servers),
//      BENCH_METRICS=compare (instead: two latchkey servers, metrics off and on
//      (METRICS_PORT), alternated round by round on the same scenarios; prints
//      on/off per scenario),
//      BENCH_SERVER_LOGS=1 (show latchkey's own output, to debug its startup).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { availableParallelism, constants as osConstants, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DocumentDashboardDocument } from '@latchkey/client';
import autocannon from 'autocannon';
import { parse, specifiedRules, validate } from 'graphql';
import { buildSchema } from '../src/graphql/schema.js';
import { queryLimitRules } from '../src/graphql/plugins/use-query-limits.js';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';

const CONNECTIONS = intEnv('BENCH_CONNECTIONS', 50);
const DURATION_S = intEnv('BENCH_DURATION', 5);
const ROUNDS = intEnv('BENCH_ROUNDS', 5);
const WARMUP_S = intEnv('BENCH_WARMUP', 10);
const READY_TIMEOUT_MS = 60_000;
const COMPARE_METRICS = process.env.BENCH_METRICS === 'compare';
if (process.env.BENCH_METRICS !== undefined && !COMPARE_METRICS)
  throw new Error(`BENCH_METRICS: only "compare" is known, got "${process.env.BENCH_METRICS}"`);

const SERVER_NAMES = ['latchkey', 'stock-yoga', 'raw-node'] as const;
type ServerName = (typeof SERVER_NAMES)[number];

const STATUS_QUERY = '{ status { version } }';
const VIEWER_QUERY = '{ viewer { subject } }';
// A page of 20 documents with owners, organizations and viewerCan: the caller, the page with its
// organizations, and the owners with their organization ids (for the e-mail rule): 3 SQL statements
// whatever the page size.
const DOCUMENTS_QUERY =
  '{ documents(first: 20) { edges { cursor node { id title status updatedAt internalNotes owner { displayName email } organization { slug } viewerCan { update publish archive delete setLegalHold } } } pageInfo { hasNextPage endCursor } } }';

// The realistic operation of issue 6: packages/client's dashboard (about 3 KB of text), sent as text or as
// its APQ hash alone.
const DASHBOARD_QUERY = DocumentDashboardDocument.toString();
const DASHBOARD_HASH = createHash('sha256').update(DASHBOARD_QUERY).digest('hex');

interface Server {
  /** a ServerName, or `latchkey (metrics off|on)` in BENCH_METRICS=compare */
  name: string;
  url: string; // the GraphQL endpoint
  child: ChildProcess;
}

interface Scenario {
  name: string;
  server: Server;
  headers: Record<string, string>;
  body: string;
}

/** A request body of its own (variables, persisted-query extensions). */
function scenarioWithBody(name: string, server: Server, body: Record<string, unknown>, token?: string): Scenario {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  return { name, server, headers, body: JSON.stringify(body) };
}

interface Sample {
  reqPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number; // connection errors, timeouts included
  timeouts: number;
}

interface Summary extends Sample {
  scenario: string;
  server: string;
  rounds: Sample[];
}

// ---------------------------------------------------------------- pinning

// True when this process runs under `taskset -c 1` and servers go on CPU 0.
const pinned = process.env.BENCH_PINNED === '1';

function canPin(): boolean {
  // Pinning needs two usable cores; with one, pinning both sides to it would
  // only serialize them and make the numbers meaningless.
  if (availableParallelism() < 2) return false;
  return spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;
}

// Re-run this same script under `taskset -c 1` and mirror its exit status.
function reexecPinned(): void {
  const child = spawn('taskset', ['-c', '1', process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PINNED: '1' },
  });
  // Ctrl-C reaches the whole process group anyway; forwarding covers `kill <pid>`.
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => {
    process.exit(code ?? (signal ? 128 + (osConstants.signals[signal] ?? 0) : 1));
  });
}

// ---------------------------------------------------------------- children

const children = new Set<ChildProcess>();
const tempDirs: string[] = [];

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function spawnServer(script: string, env: Record<string, string>, output: 'pipe' | 'ignore' | 'inherit'): ChildProcess {
  // taskset exec()s node, so child.pid is the node process itself (matters for /proc/<pid>).
  const [cmd, args] = pinned ? ['taskset', ['-c', '0', process.execPath, script]] : [process.execPath, [script]];
  const child = spawn(cmd, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', output, output === 'pipe' ? 'inherit' : output],
  });
  child.on('error', () => {}); // surfaced through exitCode / the readiness wait instead
  children.add(child);
  return child;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (!isRunning(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

let stopping: Promise<void> | undefined;
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    await Promise.all([...children].map(stopChild));
    await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  })();
  return stopping;
}

// Last line of defence against orphans if we exit without going through stopAll().
process.on('exit', () => {
  for (const child of children) if (isRunning(child)) child.kill('SIGKILL');
});

// ---------------------------------------------------------------- servers

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createNetServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The baselines announce readiness with `listening <url>` on stdout.
function waitForListening(name: string, child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(
      () => fail(new Error(`${name}: no "listening <url>" line within ${READY_TIMEOUT_MS / 1000} s`)),
      READY_TIMEOUT_MS,
    );
    const onExit = (code: number | null) => fail(new Error(`${name}: exited with code ${code} before listening`));
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const match = /^listening (\S+)/m.exec(buffered);
      if (!match?.[1]) return;
      cleanup();
      child.stdout?.resume(); // keep draining so the child never blocks on a full pipe
      resolve(match[1]);
    };
    function cleanup() {
      clearTimeout(timer);
      child.off('exit', onExit);
      child.stdout?.off('data', onData);
    }
    function fail(err: Error) {
      cleanup();
      reject(err);
    }
    child.once('exit', onExit);
    child.stdout?.on('data', onData);
  });
}

async function startBaseline(name: 'stock-yoga' | 'raw-node'): Promise<Server> {
  const port = await freePort();
  const script = fileURLToPath(new URL(`./${name}.js`, import.meta.url));
  // NODE_ENV=production for every server, so no one pays for dev-mode extras.
  const child = spawnServer(script, { NODE_ENV: 'production', PORT: String(port) }, 'pipe');
  const printed = await waitForListening(name, child);
  return { name, url: new URL('/graphql', printed).href, child };
}

// latchkey logs through pino; its output is discarded (reading it would cost
// this process CPU during the run), so readiness comes from GET /readyz.
async function waitForReadyz(baseUrl: string, child: ChildProcess): Promise<void> {
  const hint = process.env.BENCH_SERVER_LOGS ? '' : ' (rerun with BENCH_SERVER_LOGS=1 to see its output)';
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!isRunning(child)) throw new Error(`latchkey: exited with code ${child.exitCode ?? child.signalCode} during startup${hint}`);
    try {
      const res = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`latchkey: GET /readyz did not answer 200 within ${READY_TIMEOUT_MS / 1000} s${hint}`);
}

/** `pnpm latchkey <args>` against the benchmark's server configuration; returns stdout. */
function latchkeyCli(env: Record<string, string>, args: string[]): string {
  const cli = fileURLToPath(new URL('../src/cli.js', import.meta.url));
  const result = spawnSync(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`latchkey ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout.trim();
}

/** Enough acme documents for a full page of 20 besides the demo data, created through the API itself. */
async function createDocuments(graphqlUrl: string, token: string): Promise<void> {
  for (let i = 0; i < 25; i++) {
    const res = await fetch(graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        query:
          'mutation ($title: String!) { createDocument(input: { organization: "acme", title: $title, body: "Benchmark." }) { document { id } } }',
        variables: { title: `Benchmark document ${i}` },
      }),
    });
    if (res.status !== 200) throw new Error(`latchkey: createDocument answered ${res.status}`);
  }
}

async function firstDocumentId(graphqlUrl: string, token: string): Promise<string> {
  const res = await fetch(graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ documents(first: 1) { edges { node { id } } } }' }),
  });
  const json = (await res.json()) as { data?: { documents: { edges: { node: { id: string } }[] } } };
  const id = json.data?.documents.edges[0]?.node.id;
  if (!id) throw new Error('latchkey: no document to pin on the dashboard');
  return id;
}

/**
 * What skipping parse and validation is worth for the dashboard, measured in this process: parsing and
 * validating its text against the real schema and limit rules (what a text request costs on a cold cache),
 * microseconds per operation.
 */
function parseAndValidateMicros(iterations = 2000): { parse: number; validate: number } {
  const schema = buildSchema();
  const rules = [...specifiedRules, ...queryLimitRules({ maxDepth: 15, maxAliases: 30, maxDirectives: 20 })];
  for (let i = 0; i < 200; i++) validate(schema, parse(DASHBOARD_QUERY), rules);
  let start = process.hrtime.bigint();
  let document = parse(DASHBOARD_QUERY);
  for (let i = 0; i < iterations; i++) document = parse(DASHBOARD_QUERY);
  const parseMicros = Number(process.hrtime.bigint() - start) / 1000 / iterations;
  start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) validate(schema, document, rules);
  const validateMicros = Number(process.hrtime.bigint() - start) / 1000 / iterations;
  return { parse: parseMicros, validate: validateMicros };
}

async function startLatchkey(
  name = 'latchkey',
  extraEnv: Record<string, string> = {},
): Promise<{ server: Server; token: string; aliceToken: string; pinnedId: string; metricsUrl?: string }> {
  const main = fileURLToPath(new URL('../src/main.js', import.meta.url));
  if (!existsSync(main)) throw new Error(`latchkey: ${main} not found; build the app first (pnpm build)`);

  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'latchkey-bench-'));
  tempDirs.push(dataDir);

  // A throwaway signing key shared with the server, so the driver can mint an
  // access token the server accepts without going through a login flow.
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  const signingKey = { ...jwk, kid, alg: 'RS256', use: 'sig' };

  const env = {
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: publicUrl,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    SIGNING_KEY: JSON.stringify(signingKey),
    ...extraEnv,
  };
  // The embedded database admits one process at a time: seed it (and mint alice's token) before the server opens it.
  latchkeyCli(env, ['seed']);
  const aliceToken = latchkeyCli(env, ['token', '--email', 'alice@acme.test', '--ttl', '3600']);
  const child = spawnServer(main, env, process.env.BENCH_SERVER_LOGS ? 'inherit' : 'ignore');
  await waitForReadyz(publicUrl, child);

  // The server's contract: issuer = PUBLIC_URL, audience = urn:latchkey:api.
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ scope: 'openid', amr: ['otp'], acr: 'urn:latchkey:acr:otp', auth_time: now })
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
    .setIssuer(publicUrl)
    .setAudience('urn:latchkey:api')
    .setSubject('bench-user')
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .setJti(randomUUID())
    .sign(privateKey);

  await createDocuments(`${publicUrl}/graphql`, aliceToken);
  const pinnedId = await firstDocumentId(`${publicUrl}/graphql`, aliceToken);
  // The dashboard registered once (APQ): the persisted scenario then sends the hash alone.
  const registration = await fetch(`${publicUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${aliceToken}` },
    body: JSON.stringify({
      query: DASHBOARD_QUERY,
      variables: { organization: 'acme', pinned: pinnedId },
      extensions: { persistedQuery: { version: 1, sha256Hash: DASHBOARD_HASH } },
    }),
  });
  if (registration.status !== 200)
    throw new Error(`latchkey: registering the dashboard answered ${registration.status}: ${await registration.text()}`);
  const metricsUrl = extraEnv.METRICS_PORT ? `http://127.0.0.1:${extraEnv.METRICS_PORT}/metrics` : undefined;
  return { server: { name, url: `${publicUrl}/graphql`, child }, token, aliceToken, pinnedId, metricsUrl };
}

// ---------------------------------------------------------------- measuring

function scenario(name: string, server: Server, query: string, token?: string): Scenario {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  return { name, server, headers, body: JSON.stringify({ query }) };
}

// One request up front, so the benchmark never ends up measuring error answers.
// Every top-level field must be non-null too: a rejected token would make
// `viewer` null rather than an HTTP error.
async function check(s: Scenario): Promise<void> {
  const res = await fetch(s.server.url, { method: 'POST', headers: s.headers, body: s.body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // reported below
  }
  const data = isObject(json) ? json.data : undefined;
  const ok =
    res.status === 200 &&
    isObject(json) &&
    !('errors' in json) &&
    isObject(data) &&
    Object.values(data).every((v) => v !== null && v !== undefined);
  if (!ok) throw new Error(`scenario "${s.name}" check failed: HTTP ${res.status} ${text.slice(0, 500)}`);
}

async function load(server: Server, requests: Scenario[], durationS: number): Promise<Sample> {
  const result = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: durationS,
    // A sequence that every connection cycles through; one entry for a measured scenario.
    requests: requests.map((s) => ({ method: 'POST' as const, headers: s.headers, body: s.body })),
  });
  if (!isRunning(server.child)) throw new Error(`${server.name}: exited during the benchmark`);
  return {
    reqPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function summarize(s: Scenario, rounds: Sample[]): Summary {
  const sum = (key: keyof Sample) => rounds.reduce((acc, r) => acc + r[key], 0);
  return {
    scenario: s.name,
    server: s.server.name,
    reqPerSec: median(rounds.map((r) => r.reqPerSec)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    non2xx: sum('non2xx'),
    errors: sum('errors'),
    timeouts: sum('timeouts'),
    rounds,
  };
}

function rssMiB(pid: number | undefined): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb ? Number(kb) / 1024 : null;
  } catch {
    return null; // no procfs (not Linux) or the process is gone
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const only = selectedServers();
  const log = (msg: string) => process.stderr.write(`${msg}\n`);
  log(
    `bench: ${CONNECTIONS} connections, ${DURATION_S} s x ${ROUNDS} rounds, ` +
      (pinned ? 'servers on CPU 0, autocannon on CPU 1' : 'NOT pinned (needs taskset and 2 CPUs)'),
  );

  // Start everything first: rounds alternate between servers, so all stay up.
  const servers: Server[] = [];
  const scenarios: Scenario[] = [];
  let metricsUrl: string | undefined;
  if (COMPARE_METRICS) {
    // The same server twice, without and with METRICS_PORT: what collecting metrics costs, alternated in one run.
    for (const setting of ['off', 'on'] as const) {
      const started = await startLatchkey(
        `latchkey (metrics ${setting})`,
        setting === 'on' ? { METRICS_PORT: String(await freePort()) } : {},
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
    const { server, token, aliceToken, pinnedId } = await startLatchkey();
    servers.push(server);
    const variables = { organization: 'acme', pinned: pinnedId };
    scenarios.push(
      scenario('latchkey status', server, STATUS_QUERY),
      scenario('latchkey viewer', server, VIEWER_QUERY, token),
      scenario('latchkey documents(first: 20)', server, DOCUMENTS_QUERY, aliceToken),
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
  for (const name of ['stock-yoga', 'raw-node'] as const) {
    if (COMPARE_METRICS || !only.has(name)) continue;
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
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < scenarios.length; i++) {
      const s = scenarios[(i + round) % scenarios.length]!;
      const sample = await load(s.server, [s], DURATION_S);
      samples.get(s)!.push(sample);
      log(
        `round ${round + 1}/${ROUNDS}  ${s.name.padEnd(18)} ${fmt(sample.reqPerSec, 0).padStart(7)} req/s  ` +
          `p50 ${fmt(sample.p50)} ms  p99 ${fmt(sample.p99)} ms  non-2xx ${sample.non2xx}  errors ${sample.errors}`,
      );
      await sleep(500); // let the previous run's sockets close before the next one
    }
  }

  const summaries = scenarios.map((s) => summarize(s, samples.get(s)!));
  const rss = Object.fromEntries(servers.map((s) => [s.name, rssMiB(s.child.pid)]));
  const byName = (name: string) => summaries.find((s) => s.scenario === name);
  const ratio = (a: string, b: string) => {
    const x = byName(a);
    const y = byName(b);
    return x && y && y.reqPerSec > 0 ? x.reqPerSec / y.reqPerSec : null;
  };
  const dashboardText = summaries.find((x) => x.scenario.startsWith('latchkey dashboard text'))?.scenario ?? '';
  const ratios = {
    latchkeyStatusVsStockYoga: ratio('latchkey status', 'stock-yoga status'),
    latchkeyViewerVsLatchkeyStatus: ratio('latchkey viewer', 'latchkey status'),
    dashboardPersistedVsText: ratio('latchkey dashboard persisted (hash)', dashboardText),
  };
  const micro = only.has('latchkey') && !COMPARE_METRICS ? parseAndValidateMicros() : undefined;
  const metricsCost = COMPARE_METRICS ? await compareMetrics(summaries, metricsUrl!) : undefined;

  // Report (stdout): table, memory, target ratios.
  const lines = [
    '| scenario | req/s (median) | x stock-yoga | x raw-node | p50 ms | p99 ms | non-2xx |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const s of summaries) {
    const vs = (base: string) => {
      const r = ratio(s.scenario, base);
      return r === null ? '-' : `${r.toFixed(2)}x`;
    };
    const non2xx = s.non2xx > 0 ? `${s.non2xx} FAILED` : '0';
    lines.push(
      `| ${s.scenario} | ${fmt(s.reqPerSec, 0)} | ${vs('stock-yoga status')} | ${vs('raw-node status')} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${non2xx} |`,
    );
  }
  lines.push('');
  for (const s of summaries.filter((x) => x.errors > 0)) {
    lines.push(`note: ${s.scenario} had ${s.errors} connection errors (${s.timeouts} timeouts)`);
  }
  lines.push('Resident memory after the run (VmRSS):');
  for (const [name, mib] of Object.entries(rss)) lines.push(`- ${name}: ${mib === null ? 'n/a' : `${mib.toFixed(1)} MiB`}`);
  lines.push('');
  const fmtRatio = (r: number | null) => (r === null ? 'n/a' : `${r.toFixed(2)}x`);
  if (metricsCost) {
    for (const { scenario: name, ratio: onOff } of metricsCost.ratios)
      lines.push(`${name}: metrics on / off = ${fmtRatio(onOff)} (target >= 0.95x)`);
    lines.push(`the metrics server counted ${metricsCost.requestsCounted} HTTP requests (latchkey_http_request_duration_seconds_count)`);
  } else {
    lines.push(`latchkey status / stock-yoga = ${fmtRatio(ratios.latchkeyStatusVsStockYoga)} (target >= 3x)`);
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

  const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url)); // from apps/api/dist/bench/
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
  };
  await writeFile(join(outDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  log(`results written to ${join(outDir, 'latest.json')}`);
}

/**
 * BENCH_METRICS=compare: on/off per scenario (medians of the alternated rounds), and a scrape of the metrics
 * server, so a run that measured nothing (metrics not actually collected) shows.
 */
async function compareMetrics(
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

// ---------------------------------------------------------------- helpers

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

function selectedServers(): Set<ServerName> {
  const raw = process.env.BENCH_ONLY?.trim();
  if (!raw) return new Set(SERVER_NAMES);
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(SERVER_NAMES as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`BENCH_ONLY: unknown server(s) ${unknown.join(', ')}; expected ${SERVER_NAMES.join(', ')}`);
  return new Set(names as ServerName[]);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fmt(n: number, digits = 2): string {
  return n.toFixed(digits);
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
    .then(() => process.exit(0))
    .catch(async (err: unknown) => {
      process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
      await stopAll();
      process.exit(1);
    });
}
