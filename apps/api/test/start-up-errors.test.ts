import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { onPostgres, seedPgliteDataDir, testTempDir } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN, requireBuild, run, STACK_TRACE, type Run } from './support/built-cli.js';
import { freePort } from './support/browser-session.js';
import { startServiceProcesses } from './support/processes.js';
import { TestPki } from './support/x509.js';

// A fault of the environment at start-up (a port in use, a database missing, unreachable or in use, a bad URL, a data
// directory that cannot be used) is one or two plain lines naming the setting or command that fixes it, exit 1, no
// stack trace: the built server as an operator starts it (dist/src/main.js).

requireBuild();

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const SIGNING_KEY = JSON.stringify({ ...privateKey.export({ format: 'jwk' }), kid: 'start-up-errors', alg: 'ES256', use: 'sig' });

/** The server started with this configuration (on a free port unless `PORT` is given), to the end of its start-up. */
async function start(env: Record<string, string>): Promise<Run> {
  const dataDir = testTempDir('start-up-errors');
  return run(
    MAIN,
    [],
    { NODE_ENV: 'test', HOST: '127.0.0.1', PORT: String(await freePort()), DATA_DIR: dataDir, SIGNING_KEY, LOG_LEVEL: 'warn', ...env },
    dataDir,
  );
}

/** Refused to start: exit 1, only `latchkey:` lines on stderr (at most two, the second indented), no stack trace. */
function expectPlainRefusal(result: Run, ...naming: (string | RegExp)[]): void {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).not.toMatch(STACK_TRACE);
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines.length, result.stderr).toBeLessThanOrEqual(2);
  expect(lines[0]).toMatch(/^latchkey: /);
  for (const text of naming) expect(result.stderr).toMatch(text);
}

/** A port another listener holds while a block's tests run: its number, once the block's `beforeAll` has run. */
function portInUse(): () => number {
  const taken: Server = createServer();
  beforeAll(() => new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  return () => (taken.address() as { port: number }).port;
}

describe('start-up faults of the environment: plain lines naming the fix, exit 1, no stack trace', () => {
  const takenPort = portInUse();

  it('a port in use names the address and how to choose another (PORT)', async () => {
    const dataDir = testTempDir('start-up-errors');
    seedPgliteDataDir(dataDir);
    const result = await start({ PORT: String(takenPort()), DATA_DIR: dataDir });
    expectPlainRefusal(result, `127.0.0.1:${takenPort()} is already in use`, `PORT=${takenPort() + 1} pnpm start`);
  }, 60_000);

  it('a PostgreSQL server that does not answer names DATABASE_URL and the address', async () => {
    const port = await freePort();
    const result = await start({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/latchkey` });
    expectPlainRefusal(result, `DATABASE_URL: no PostgreSQL server answers at 127.0.0.1:${port} (connection refused)`);
  });

  it('a URL postgres-js cannot read is refused without showing it (it may hold a password)', async () => {
    const result = await start({ DATABASE_URL: 'postgres://user:s3cret@[::1' });
    expectPlainRefusal(result, 'DATABASE_URL: not a connection URL', 'percent-encoded');
    expect(result.stderr).not.toContain('s3cret');
  });

  it('the embedded database open in another process names the process and the ways out (DATA_DIR, DATABASE_URL)', async () => {
    const dataDir = testTempDir('start-up-errors');
    seedPgliteDataDir(dataDir);
    // The lock a running server holds: this test runner's own pid, alive.
    writeFileSync(join(dataDir, 'pglite.lock'), `${process.pid}\n`);
    const result = await start({ DATA_DIR: dataDir });
    expectPlainRefusal(result, `the embedded database in ${dataDir} is open in process ${process.pid}`, 'DATA_DIR', 'DATABASE_URL');
  });

  it('a data directory that cannot be one names DATA_DIR', async () => {
    const file = join(testTempDir('start-up-errors'), 'a-file');
    writeFileSync(file, 'not a directory\n');
    const result = await start({ DATA_DIR: join(file, 'data') });
    expectPlainRefusal(result, `DATA_DIR ${join(file, 'data')}: Latchkey cannot keep its data there`);
  });

  it('a Redis server that does not answer names REDIS_URL and the address, never the password', async () => {
    const dataDir = testTempDir('start-up-errors');
    seedPgliteDataDir(dataDir);
    const port = await freePort();
    const result = await start({ DATA_DIR: dataDir, REDIS_URL: `redis://user:s3cret@127.0.0.1:${port}` });
    expectPlainRefusal(result, `REDIS_URL: no Redis server answers at 127.0.0.1:${port}`);
    expect(result.stderr).not.toContain('s3cret');
  }, 60_000);

  it('an API_BUDGET_FILE with a negative, a missing or an unknown figure names the key path', async () => {
    const dir = testTempDir('start-up-errors');
    const size = { capacity: 100, restorePerSecond: 5 };
    const files = {
      'plans.FREE.capacity': { guest: size, plans: { FREE: { capacity: -1, restorePerSecond: 5 }, PRO: size } },
      'plans.PRO.restorePerSecond': { guest: size, plans: { FREE: size, PRO: { capacity: 100 } } },
      'guest.burst': { guest: { ...size, burst: 3 }, plans: { FREE: size, PRO: size } },
    };
    const results = await Promise.all(
      Object.entries(files).map(([key, contents]) => {
        const file = join(dir, `${key}.json`);
        writeFileSync(file, JSON.stringify(contents));
        return start({ API_BUDGET_FILE: file }).then((result) => ({ key, result }));
      }),
    );
    for (const { key, result } of results) expectPlainRefusal(result, `API_BUDGET_FILE: ${key}`);
  });

  it('a service registered with the role OWNER names the client (OIDC_CLIENTS)', async () => {
    const owner = {
      client_id: 'nightly-export',
      client_secret: 'nightly-export-secret-that-is-long-enough-0123456789',
      grant_types: ['client_credentials'],
      organization: 'acme',
      role: 'OWNER',
      scope: 'documents:read',
    };
    const result = await start({ OIDC_CLIENTS: JSON.stringify([owner]) });
    expectPlainRefusal(result, 'OIDC_CLIENTS.0 (service "nightly-export"): role', 'OWNER');
  });

  it.runIf(onPostgres('the PostgreSQL-only tests'))('a database the server does not have says how to create it', async () => {
    const url = new URL(process.env['DATABASE_URL']!);
    url.pathname = '/latchkey_no_such_database';
    const result = await start({ DATABASE_URL: url.toString() });
    expectPlainRefusal(result, 'has no database "latchkey_no_such_database"', /createdb .* latchkey_no_such_database/);
  });
});

/** What a server that refused to start wrote (stdout and stderr as one stream, in order), and when. */
interface Refusal {
  code: number | null;
  /** every line, in the order written */
  lines: string[];
  /** from the spawn to the first line */
  firstLineMs: number;
  /** when the first line came (performance.now()) */
  firstLineAt: number;
  /** the CPU time the process used, user and system, to its exit */
  cpuMs: number;
}

/**
 * The built server started with exactly `env` (plus PATH), as an operator starts it: no LOG_LEVEL unless given,
 * so any log line written before the refusal shows. `whileRunning` is called with the server's port as soon as it
 * is spawned (to probe what it answers meanwhile).
 */
async function refusal(env: Record<string, string>, whileRunning?: (port: number) => Promise<void>): Promise<Refusal> {
  const dir = testTempDir('start-up-first-line');
  const port = env['PORT'] ?? String(await freePort());
  // The CPU time the process used, written as it exits: a bound on its work that a loaded machine does not stretch.
  const cpuFile = join(dir, 'cpu.json');
  const cpuReporter = join(dir, 'cpu-report.mjs');
  writeFileSync(
    cpuReporter,
    "import { writeFileSync } from 'node:fs';\n" +
      `process.on('exit', () => { const { user, system } = process.cpuUsage(); writeFileSync(${JSON.stringify(cpuFile)}, String((user + system) / 1000)); });\n`,
  );
  const started = performance.now();
  // One stream for both (2>&1), so the order of the lines is the order they were written in.
  const child = spawn('sh', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, MAIN], {
    cwd: dir,
    env: { PATH: process.env['PATH'], NODE_OPTIONS: `--import=${pathToFileURL(cpuReporter).href}`, HOST: '127.0.0.1', PORT: port, ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let output = '';
  let firstLineMs = Number.NaN;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    if (Number.isNaN(firstLineMs) && output.includes('\n')) firstLineMs = performance.now() - started;
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    await whileRunning?.(Number(port));
    const code = await exited;
    return {
      code,
      lines: output.split('\n').filter((line) => line !== ''),
      firstLineMs,
      firstLineAt: started + firstLineMs,
      cpuMs: Number(readFileSync(cpuFile, 'utf8')),
    };
  } finally {
    clearTimeout(killer);
    child.kill('SIGKILL');
  }
}

/** The refusal's plain message is the first thing written, and nothing else but its second line follows. */
function expectFirstLine(result: Refusal, first: string | RegExp): void {
  expect(result.code, result.lines.join('\n')).toBe(1);
  expect(result.lines[0], result.lines.join('\n')).toMatch(/^latchkey: /);
  expect(result.lines[0]).toMatch(first);
  expect(
    result.lines.slice(1).every((line) => line.startsWith('  ')),
    result.lines.join('\n'),
  ).toBe(true);
}

/**
 * "Within a second" is said of the server's own work: measured as the CPU time the process used to its exit (node's
 * own start included), which a loaded machine does not stretch (the run with the database opened first used 7-8 s
 * of it, mostly creating the embedded database). The time from the spawn to the line is bounded too, generously,
 * since other processes share the machine: what it rules out is database work (9-24 s before this was fixed).
 */
const OWN_WORK_MS = 1000;
/** A data directory that does not exist yet: development would create the embedded database (and a key) in it. */
const freshDataDir = () => join(testTempDir('start-up-first-line'), 'data');
const WALL_MS = 5000;

/** A server certificate and key for the HTTPS listener (TLS_CERT_FILE, TLS_KEY_FILE). */
function tlsFiles(): Record<string, string> {
  const pki = new TestPki();
  const server = pki.issue('server', pki.authority('server-ca', '/CN=Latchkey Test Server CA'), '/CN=localhost', ['DNS:localhost']);
  return { TLS_CERT_FILE: server.certFile, TLS_KEY_FILE: server.keyFile };
}

describe('a fault found before the database opens: its plain message first, within a second, no database work', () => {
  const takenPort = portInUse();

  it.each([
    ['PORT', (port: number) => ({ PORT: String(port) })],
    ['TLS_PORT', (port: number) => ({ TLS_PORT: String(port), ...tlsFiles() })],
    ['METRICS_PORT', (port: number) => ({ METRICS_PORT: String(port) })],
  ])(
    '%s in use',
    async (setting, settings) => {
      const dataDir = freshDataDir();
      const result = await refusal({ NODE_ENV: 'development', DATA_DIR: dataDir, ...settings(takenPort()) });
      expectFirstLine(result, `latchkey: 127.0.0.1:${takenPort()} is already in use`);
      expect(result.lines[1]).toContain(`${setting}=${takenPort() + 1} pnpm start`);
      expect(existsSync(join(dataDir, 'pglite')), 'no database directory').toBe(false);
      expect(existsSync(dataDir), 'nothing written in DATA_DIR (no key generated either)').toBe(false);
      expect(result.cpuMs).toBeLessThan(OWN_WORK_MS);
      expect(result.firstLineMs).toBeLessThan(WALL_MS);
    },
    60_000,
  );

  it('a bad setting', async () => {
    const dataDir = freshDataDir();
    const result = await refusal({ NODE_ENV: 'development', DATA_DIR: dataDir, DATABASE_TIMEOUT: 'soon' });
    expectFirstLine(result, 'latchkey: invalid configuration:');
    expect(result.lines.join('\n')).toContain('DATABASE_TIMEOUT');
    expect(existsSync(dataDir), 'no database directory, nothing in DATA_DIR').toBe(false);
    expect(result.cpuMs).toBeLessThan(OWN_WORK_MS);
    expect(result.firstLineMs).toBeLessThan(WALL_MS);
  }, 60_000);
});

describe('a database fault: its plain message first; an unreachable DATABASE_URL within DATABASE_TIMEOUT', () => {
  it('nothing listens at its port: said as soon as the connection is refused', async () => {
    const port = await freePort();
    const result = await refusal({
      NODE_ENV: 'development',
      DATA_DIR: freshDataDir(),
      DATABASE_TIMEOUT: '5s',
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/latchkey`,
    });
    expectFirstLine(result, `DATABASE_URL: no PostgreSQL server answers at 127.0.0.1:${port} (connection refused)`);
    // Refused at once: well within the stated timeout, node's and the modules' own start included.
    expect(result.firstLineMs).toBeLessThan(5000);
  }, 60_000);

  it('the embedded database open in another process: said first too, before any log line about it', async () => {
    const dataDir = testTempDir('start-up-first-line');
    seedPgliteDataDir(dataDir);
    writeFileSync(join(dataDir, 'pglite.lock'), `${process.pid}\n`);
    const result = await refusal({ NODE_ENV: 'development', SIGNING_KEY, DATA_DIR: dataDir });
    expectFirstLine(result, `the embedded database in ${dataDir} is open in process ${process.pid}`);
  }, 60_000);

  it('a server that accepts and never answers: said when DATABASE_TIMEOUT has passed, the listener answering "starting" meanwhile', async () => {
    // A black hole: the TCP connection is accepted, the PostgreSQL start-up message never answered.
    const sockets = new Set<Socket>();
    const hole = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => hole.listen(0, '127.0.0.1', resolve));
    const holePort = (hole.address() as { port: number }).port;
    const TIMEOUT_MS = 3000;
    const meanwhile: Record<string, number> = {};
    let listeningAt = Number.NaN;
    let refusedAt = Number.NaN;
    try {
      const result = await refusal(
        {
          NODE_ENV: 'test',
          SIGNING_KEY,
          DATA_DIR: freshDataDir(),
          DATABASE_TIMEOUT: `${TIMEOUT_MS / 1000}s`,
          DATABASE_URL: `postgres://postgres@127.0.0.1:${holePort}/latchkey`,
        },
        async (port) => {
          // The listener is bound before the database is tried: the process is up, not ready, and says so.
          for (let i = 0; i < 200 && Number.isNaN(listeningAt); i++) {
            const health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
            if (health) {
              listeningAt = performance.now();
              meanwhile['/healthz'] = health.status;
            } else await new Promise((resolve) => setTimeout(resolve, 25));
          }
          meanwhile['/readyz'] = (await fetch(`http://127.0.0.1:${port}/readyz`)).status;
          const graphql = await fetch(`http://127.0.0.1:${port}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"query":"{ __typename }"}',
          });
          meanwhile['/graphql'] = graphql.status;
          meanwhile['retry-after'] = Number(graphql.headers.get('retry-after'));
          expect(((await graphql.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe(
            'SERVICE_UNAVAILABLE',
          );
        },
      );
      refusedAt = result.firstLineAt;
      expectFirstLine(result, `DATABASE_URL: no PostgreSQL server answers at 127.0.0.1:${holePort} (no answer within DATABASE_TIMEOUT)`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => hole.close(() => resolve()));
    }
    expect(meanwhile).toEqual({ '/healthz': 200, '/readyz': 503, '/graphql': 503, 'retry-after': 1 });
    // From the moment it listened (then it loads the keys and tries the database) to its refusal: the timeout, and
    // not much more (the exit's own time, and a loaded machine's).
    expect(refusedAt - listeningAt).toBeLessThan(TIMEOUT_MS + 2000);
  }, 60_000);
});

describe('log lines', () => {
  it('development in a terminal: lines a person reads (time, level, message, fields), not JSON', async () => {
    const dataDir = testTempDir('start-up-errors');
    seedPgliteDataDir(dataDir);
    // util-linux's script(1) gives the server a terminal, as `pnpm start` in a shell has.
    const child = spawn('script', ['-qfec', `${process.execPath} ${MAIN}`, '/dev/null'], {
      env: {
        PATH: process.env['PATH'],
        NODE_ENV: 'development',
        HOST: '127.0.0.1',
        PORT: String(await freePort()),
        DATA_DIR: dataDir,
        SIGNING_KEY,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          output += chunk;
          if (output.includes('Latchkey API listening')) resolve();
        });
        child.once('exit', () => reject(new Error(`the server ended before listening:\n${output}`)));
      });
    } finally {
      child.kill('SIGKILL');
    }
    const lines = stripVTControlCharacters(output).split(/\r?\n/);
    expect(lines).toContainEqual(
      expect.stringMatching(/^\[\d\d:\d\d:\d\d\] INFO: Latchkey API listening on http:\/\/127\.0\.0\.1:\d+\/graphql/),
    );
    expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
    // oidc-provider's own warning on Node 20 is held back, and said in one line of ours.
    expect(lines.filter((line) => /^\s*oidc-provider WARNING/.test(line))).toEqual([]);
    if (Number(process.versions.node.split('.')[0]) < 22)
      expect(lines).toContainEqual(expect.stringMatching(/INFO: oidc-provider warns of an unsupported runtime on Node 20\..*harmless/));
  }, 60_000);
});

describe('Ctrl-C', () => {
  it('ends the server once and cleanly (exit 0) though it arrives twice (from the terminal, and forwarded by pnpm)', async () => {
    const processes = await startServiceProcesses(1);
    try {
      processes.children[0]!.kill('SIGINT');
      processes.children[0]!.kill('SIGINT');
      expect((await processes.exited(0)).code).toBe(0);
    } finally {
      await processes.stop();
    }
  }, 60_000);
});
