import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedPgliteDataDir, testTempDir } from '@latchkey/db/testing';
import { afterAll, beforeAll, expect } from 'vitest';
import { startTestService, type TestService } from './service.js';

// The BUILT operator CLI and server entry point, run as child processes (the turbo pipeline builds
// before tests; by hand: `cd apps/api && npx tsc -p tsconfig.build.json`).

export const DIST = fileURLToPath(new URL('../../dist/src/', import.meta.url));
export const CLI = path.join(DIST, 'cli.js');
export const MAIN = path.join(DIST, 'main.js');
export const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
export const STACK_TRACE = /^\s+at\s/m;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `node <script> ...args` with exactly `env` (plus PATH), in `cwd`, and collects its output. */
export function run(
  script: string,
  args: string[],
  env: Record<string, string | undefined>,
  cwd: string,
  timeoutMs = 60_000,
): Promise<Run> {
  return runProgram(process.execPath, [script, ...args], env, cwd, timeoutMs);
}

/** Runs `program ...args` (found on PATH) with exactly `env` (plus PATH), in `cwd`, and collects its output. */
export function runProgram(
  program: string,
  args: string[],
  env: Record<string, string | undefined>,
  cwd: string,
  timeoutMs = 60_000,
): Promise<Run> {
  const started = Date.now();
  const childEnv = Object.fromEntries(
    Object.entries({ PATH: process.env['PATH'], ...env }).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** Fails this file's tests before they start when the build they run is missing. */
export function requireBuild(): void {
  beforeAll(() => {
    if (!existsSync(CLI) || !existsSync(MAIN)) {
      throw new Error(`${DIST} is not built: run \`cd apps/api && npx tsc -p tsconfig.build.json\` (turbo's test task does)`);
    }
  });
}

// Live bindings: assigned by useOperatorCli's beforeAll, read by the tests of the describe block that called it.
export let service: TestService;
export let workDir: string;
export let dataDir: string;
export let env: Record<string, string | undefined>;

/** `latchkey <args>` against the test service's database and key, in a working directory of its own. */
export const cli = (...args: string[]) => run(CLI, args, env, workDir);

/** Starts a service for the CLI to work on (before the tests of the calling describe block); stops it after them. */
export function useOperatorCli(): void {
  beforeAll(async () => {
    service = await startTestService();
    // A working directory of its own, so a developer's .env is never loaded into the child.
    workDir = testTempDir('cli');
    dataDir = path.join(workDir, 'data');
    if (!service.config.database.url) seedPgliteDataDir(dataDir);
    env = {
      DATA_DIR: dataDir,
      SIGNING_KEY: JSON.stringify(service.privateJwk),
      PUBLIC_URL: 'http://localhost:4000',
      // the service's own database (on PostgreSQL each test service has one)
      DATABASE_URL: service.config.database.url,
    };
    expect(service.config.tokens.issuer).toBe('http://localhost:4000');
  });
  afterAll(async () => {
    await service?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });
}
