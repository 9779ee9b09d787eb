import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { onPostgres, seedPgliteDataDir, testTempDir } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN, requireBuild, run, STACK_TRACE, type Run } from './support/built-cli.js';
import { freePort } from './support/browser-session.js';
import { startServiceProcesses } from './support/processes.js';

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
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '' && !line.includes('oidc-provider WARNING'));
  expect(lines.length, result.stderr).toBeLessThanOrEqual(2);
  expect(lines[0]).toMatch(/^latchkey: /);
  for (const text of naming) expect(result.stderr).toMatch(text);
}

describe('start-up faults of the environment: plain lines naming the fix, exit 1, no stack trace', () => {
  let taken: Server;
  let takenPort: number;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    takenPort = (taken.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

  it('a port in use names the address and how to choose another (PORT)', async () => {
    const dataDir = testTempDir('start-up-errors');
    seedPgliteDataDir(dataDir);
    const result = await start({ PORT: String(takenPort), DATA_DIR: dataDir });
    expectPlainRefusal(result, `127.0.0.1:${takenPort} is already in use`, `PORT=${takenPort + 1} pnpm start`);
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
