import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { availableParallelism, constants as osConstants } from 'node:os';

// The server processes of a run: CPU pinning, spawning, and stopping every one of them (and their temporary
// directories) however the run ends.

// True when this process runs under `taskset -c 1` and servers go on CPU 0.
export const pinned = process.env.BENCH_PINNED === '1';

/**
 * On PostgreSQL, the database backends serving a server run beside the load generator (CPU 1) during each load, so
 * the server has its core to itself as it has against the load generator. Left to the scheduler
 * (`BENCH_PIN_DATABASE=0`), a backend woken by the server's write often runs on the server's own core and the
 * server's throughput pays for the database's work (which the report counts separately anyway).
 */
export const pinDatabase = pinned && process.env.BENCH_PIN_DATABASE !== '0';

let unpinnable = false;

/** Moves processes to CPU 1, the load generator's; says once when the system refuses (another user's processes). */
export function pinBesideLoadGenerator(pids: readonly number[]): void {
  for (const pid of pids) {
    if (spawnSync('taskset', ['-pc', '1', String(pid)], { stdio: 'ignore' }).status !== 0 && !unpinnable) {
      unpinnable = true;
      console.error(`bench: could not pin database backend ${pid} to CPU 1; backends run where the scheduler puts them`);
    }
  }
}

export function canPin(): boolean {
  // Pinning needs two usable cores; with one, pinning both sides to it would
  // only serialize them and make the numbers meaningless.
  if (availableParallelism() < 2) return false;
  return spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;
}

// Re-run this same script under `taskset -c 1` and mirror its exit status.
export function reexecPinned(): void {
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

const children = new Set<ChildProcess>();
export const tempDirs: string[] = [];

export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Starts `script` under node with `nodeFlags` (the flags its start command gives node), pinned to CPU 0 when it can. */
export function spawnServer(
  script: string,
  env: Record<string, string>,
  output: 'pipe' | 'ignore' | 'inherit',
  nodeFlags: readonly string[] = [],
): ChildProcess {
  // taskset exec()s node, so child.pid is the node process itself (matters for /proc/<pid>).
  const nodeArgs = [...nodeFlags, script];
  const [cmd, args] = pinned ? ['taskset', ['-c', '0', process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
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

export let stopping: Promise<void> | undefined;
export function stopAll(): Promise<void> {
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

export function freePort(): Promise<number> {
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

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
