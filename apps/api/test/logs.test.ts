import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { seedPgliteDataDir, testTempDir } from '@latchkey/db/testing';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freePort } from './support/browser-session.js';

// Log lines reach stdout within a second in production and at once in development; error
// and fatal lines at once; nothing is lost on exit, on SIGTERM, or on an uncaught exception.
//
// No figure of this machine's speed is asserted. Each line is waited for with no other activity to push it out:
// in production only the flush timer can then write it (that the timer comes every 500 ms, within the second, is
// logger.test.ts's, with fake timers); in development no timer runs at all, so a line that arrives was written at
// once. How long a line takes to arrive is a latency figure, for `pnpm bench`.

/** Far above any real latency: a line that does not come by then is never coming. */
const LINE_DEADLINE_MS = 10_000;

const MAIN = resolve(fileURLToPath(import.meta.url), '../../dist/src/main.js');
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const SIGNING_KEY = JSON.stringify({ ...privateKey.export({ format: 'jwk' }), kid: 'logs-test', alg: 'ES256', use: 'sig' });

interface Server {
  child: ChildProcessWithoutNullStreams;
  base: string;
  /** every JSON line written to stdout so far, with when it arrived */
  lines: { at: number; line: Record<string, unknown> }[];
  exited: Promise<number | null>;
  /** stdout has ended: every line the process wrote is in `lines` */
  drained: Promise<void>;
}

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const step of cleanup.splice(0)) step();
});

/** Starts the built server; it is stopped (and its data directory removed) by the steps in `stops`: after this test, by default. */
async function start(nodeEnv: 'production' | 'development', extraArgs: string[] = [], stops = cleanup): Promise<Server> {
  const dataDir = testTempDir('logs');
  seedPgliteDataDir(dataDir);
  const port = await freePort();
  const child = spawn(process.execPath, [...extraArgs, MAIN], {
    env: {
      PATH: process.env['PATH'],
      NODE_ENV: nodeEnv,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: `http://localhost:${port}`,
      DATA_DIR: dataDir,
      SIGNING_KEY,
      LOG_LEVEL: 'info',
    },
  });
  const server: Server = {
    child,
    base: `http://127.0.0.1:${port}`,
    lines: [],
    exited: new Promise((done) => child.once('exit', (code) => done(code))),
    drained: new Promise((done) => child.stdout.once('close', () => done())),
  };
  stops.push(() => {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const complete = pending.split('\n');
    pending = complete.pop()!;
    for (const text of complete)
      if (text.trim()) server.lines.push({ at: performance.now(), line: JSON.parse(text) as Record<string, unknown> });
  });
  child.stderr.resume();
  await waitFor(server, (line) => typeof line['msg'] === 'string' && line['msg'].startsWith('Latchkey API listening'), 60_000);
  return server;
}

async function waitFor(server: Server, match: (line: Record<string, unknown>) => boolean, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const found = server.lines.find(({ line }) => match(line));
    if (found) return found.at;
    if (performance.now() > deadline)
      throw new Error(`no such log line within ${timeoutMs} ms; got ${JSON.stringify(server.lines.map(({ line }) => line['msg']))}`);
    await new Promise((done) => setTimeout(done, 10));
  }
}

const requestLine = (path: string) => (line: Record<string, unknown>) => line['msg'] === 'request' && line['path'] === path;

describe('logs arrive on time and are never lost', () => {
  // One production server for the first two: its request line first, then SIGTERM.
  const afterAllTests: (() => void)[] = [];
  let production: Server | undefined;
  const productionServer = async () => (production ??= await start('production', [], afterAllTests));
  afterAll(() => {
    for (const step of afterAllTests.splice(0)) step();
  });

  it('production: a request line reaches stdout with no other activity to push it out', async () => {
    const server = await productionServer();
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
    await waitFor(server, requestLine('/healthz'), LINE_DEADLINE_MS);
  }, 90_000);

  it('SIGTERM right after a request: its line and the last line are written before the process ends', async () => {
    const server = await productionServer();
    await fetch(`${server.base}/readyz`);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    await server.drained;
    expect(server.lines.some(({ line }) => requestLine('/readyz')(line))).toBe(true);
    expect(server.lines.at(-1)?.line['msg']).toBe('stopped');
  }, 90_000);

  it('development: the start line names PUBLIC_URL and the demo; each request line reaches stdout by itself, no timer running', async () => {
    const server = await start('development');
    const started = server.lines.find(({ line }) => String(line['msg']).startsWith('Latchkey API listening'))!.line;
    expect(started['publicUrl']).toMatch(/^http:\/\/localhost:\d+$/);
    expect(started['demo']).toBe(`${String(started['publicUrl'])}/`);
    expect(started['msg']).toContain(`the demo at ${String(started['demo'])}`);
    // Request after request, each one's line is waited for before the next is sent: nothing but the line itself
    // can bring it out (a buffered line would wait for the exit).
    for (let request = 0; request < 3; request++) {
      const id = `logs-at-once-${request}`;
      await fetch(`${server.base}/healthz`, { headers: { 'x-request-id': id } });
      await waitFor(server, (line) => requestLine('/healthz')(line) && line['reqId'] === id, LINE_DEADLINE_MS);
    }
  }, 90_000);

  it('an uncaught exception: what was buffered and a fatal line with the error reach stdout, then exit 1', async () => {
    // A preload that throws outside any request when told to (SIGUSR2): an uncaught exception in the real server.
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-logs-preload-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const preload = join(dir, 'throw-on-signal.mjs');
    writeFileSync(preload, "process.on('SIGUSR2', () => setImmediate(() => { throw new Error('thrown by the test preload'); }));\n");
    const server = await start('production', ['--import', preload]);
    await fetch(`${server.base}/healthz`);
    server.child.kill('SIGUSR2');
    expect(await server.exited).toBe(1);
    await server.drained;
    expect(server.lines.some(({ line }) => requestLine('/healthz')(line))).toBe(true);
    const fatal = server.lines.at(-1)!.line;
    expect(fatal).toMatchObject({ level: 60, msg: 'uncaught exception', err: { message: 'thrown by the test preload' } });
  }, 90_000);
});

describe('resident memory after a run', () => {
  it('after a burst, an idle server gives the memory back within 45 s and goes on answering', async () => {
    // A preload that, when told to (SIGUSR2), holds about 70 MB of objects long enough for them to be promoted, then
    // drops them: what requests in flight under load leave in the old generation.
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-memory-preload-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const preload = join(dir, 'grow-heap-on-signal.mjs');
    writeFileSync(
      preload,
      "process.on('SIGUSR2', () => { let kept = []; for (let i = 0; i < 700000; i++) kept.push([i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7]); globalThis.heldByTest = kept; setTimeout(() => { globalThis.heldByTest = undefined; process.stdout.write(JSON.stringify({ msg: 'test preload: dropped' }) + '\\n'); }, 300); });\n",
    );
    const server = await start('production', ['--import', preload]);
    const residentKiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))![1]);
    server.child.kill('SIGUSR2');
    // Measured from the highest resident size seen once the preload has dropped what it held: that garbage is still
    // resident, and goes on growing for a few seconds while the collector promotes it (by 39-46 MB here, sooner or
    // later as the machine is busy), so a size read at the drop is not the top it is given back from.
    await waitFor(server, (line) => line['msg'] === 'test preload: dropped', LINE_DEADLINE_MS);
    let peak = residentKiB();
    const belowPeak = () => {
      const now = residentKiB();
      peak = Math.max(peak, now);
      return peak - now;
    };
    // Given back within 45 s (idle for 15 s, looked at every 5 s), by the server's release or by V8's own memory
    // reducer if it runs first (Node 24's sometimes does); a release the server made is logged with the heap's sizes.
    await expect.poll(belowPeak, { timeout: 45_000, interval: 250 }).toBeGreaterThan(32 * 1024);
    const released = server.lines.find(({ line }) => line['msg'] === 'idle: unused memory released')?.line;
    if (released) expect(Number(released['heapBeforeMiB']) - Number(released['heapAfterMiB'])).toBeGreaterThan(32);
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
  }, 90_000);
});
