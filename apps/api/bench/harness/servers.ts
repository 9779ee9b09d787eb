import { spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { freePort, isRunning, sleep, spawnServer, tempDirs } from './processes.js';
import { benchDatabase, seedBenchData, type BenchDatabase } from './database.js';
import { log } from './report.js';
import { DASHBOARD_HASH, DASHBOARD_QUERY, READY_TIMEOUT_MS } from './settings.js';

/** The databases of the run's latchkey servers (closed by `closeDatabases`). */
const databases: BenchDatabase[] = [];
export const closeDatabases = () => Promise.all(databases.map((database) => database.close()));

// Starting the servers under test: the three baselines (bench/stock-yoga.ts, bench/yoga-floor.ts, bench/raw-node.ts)
// and latchkey itself, seeded, with the tokens and the registered dashboard its scenarios need.

export interface Server {
  /** a ServerName, or `latchkey (metrics off|on)` in BENCH_METRICS=compare */
  name: string;
  url: string; // the GraphQL endpoint
  child: ChildProcess;
  /** the database backends serving it (latchkey on PostgreSQL), for their CPU time */
  backendPids?: () => Promise<number[]>;
}

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

export async function startBaseline(name: 'stock-yoga' | 'yoga-floor' | 'raw-node'): Promise<Server> {
  const port = await freePort();
  const script = fileURLToPath(new URL(`../${name}.js`, import.meta.url));
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

/**
 * The flags a start script gives node before the server's script (`node --max-semi-space-size=64 dist/src/main.js`
 * gives `--max-semi-space-size=64`): the bench runs latchkey as its package's `start` runs it.
 */
export function nodeFlagsOfStartScript(script: string): string[] {
  const words = script.trim().split(/\s+/);
  const node = words.lastIndexOf('node');
  if (node < 0) throw new Error(`start script "${script}" does not run node`);
  const flags: string[] = [];
  for (const word of words.slice(node + 1)) {
    if (!word.startsWith('--')) break;
    flags.push(word);
  }
  return flags;
}

/** The node flags of the api package's `start` script in a build (`<checkout>/apps/api/dist`). */
function startFlagsOf(build: string): string[] {
  const manifest = JSON.parse(readFileSync(join(build, '../package.json'), 'utf8')) as { scripts?: { start?: string } };
  return nodeFlagsOfStartScript(manifest.scripts?.start ?? 'node');
}

/** `pnpm latchkey <args>` against the benchmark's server configuration; returns stdout. */
/** This checkout's `apps/api/dist`. */
export const THIS_BUILD = fileURLToPath(new URL('../..', import.meta.url));
/** The budget file of every server the bench starts (in the package's bench/ folder, beside this file's source). */
const BUDGET_NEVER_REFUSES = fileURLToPath(new URL('../../../bench/budget-never-refuses.json', import.meta.url));

function latchkeyCli(env: Record<string, string>, args: string[], build = THIS_BUILD): string {
  const cli = join(build, 'src/cli.js');
  const result = spawnSync(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`latchkey ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout.trim();
}

/** The cursor 1,000 rows into alice's view of acme (the deep-page scenario), paging 100 at a time. */
async function cursorAt(graphqlUrl: string, token: string, rows: number): Promise<string> {
  let after: string | null = null;
  for (let seen = 0; seen < rows; seen += 100) {
    const res = await fetch(graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        query:
          'query ($after: String) { documents(first: 100, filter: { organization: "acme" }, after: $after) { pageInfo { endCursor } } }',
        variables: { after },
      }),
    });
    const json = (await res.json()) as { data?: { documents: { pageInfo: { endCursor: string | null } } } };
    after = json.data?.documents.pageInfo.endCursor ?? null;
    if (!after) throw new Error(`latchkey: fewer than ${rows} acme documents for alice (was the database seeded with --bench?)`);
  }
  return after!;
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

export async function startLatchkey(
  name = 'latchkey',
  extraEnv: Record<string, string> = {},
  build = THIS_BUILD,
  databaseLabel = '',
): Promise<{ server: Server; token: string; aliceToken: string; pinnedId: string; deepCursor: string; metricsUrl?: string }> {
  const main = join(build, 'src/main.js');
  if (!existsSync(main)) throw new Error(`latchkey: ${main} not found; build the app first (pnpm build)`);

  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'latchkey-bench-'));
  tempDirs.push(dataDir);
  const database = await benchDatabase(databaseLabel);
  databases.push(database);

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
    // Budgets on, with a file that never refuses: the bench measures what they cost, not a refusal.
    API_BUDGET_FILE: BUDGET_NEVER_REFUSES,
    ...database.env,
    ...extraEnv,
  };
  // The embedded database admits one process at a time: seed it (and mint alice's token) before the server opens it.
  log(`${name}: seeded ${JSON.stringify(seedBenchData(env))}`);
  const aliceToken = latchkeyCli(env, ['token', '--email', 'alice@acme.test', '--ttl', '3600'], build);
  const child = spawnServer(main, env, process.env.BENCH_SERVER_LOGS ? 'inherit' : 'ignore', startFlagsOf(build));
  await waitForReadyz(publicUrl, child);

  // The server's contract: issuer = PUBLIC_URL, audience = PUBLIC_URL or the former default urn:latchkey:api (accepted
  // while API_AUDIENCE is unset), which every build compared here accepts alike.
  const now = Math.floor(Date.now() / 1000);
  // It names a provider session (`sid`), as the provider's own tokens do: the ended-sessions check is on the measured path.
  const token = await new SignJWT({ scope: 'openid', amr: ['otp'], acr: 'urn:latchkey:acr:otp', auth_time: now, sid: 'bench-session-0001' })
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
    .setIssuer(publicUrl)
    .setAudience('urn:latchkey:api')
    .setSubject('bench-user')
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .setJti(randomUUID())
    .sign(privateKey);

  const deepCursor = await cursorAt(`${publicUrl}/graphql`, aliceToken, 1000);
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
  return {
    server: { name, url: `${publicUrl}/graphql`, child, backendPids: database.backendPids },
    token,
    aliceToken,
    pinnedId,
    deepCursor,
    metricsUrl,
  };
}
