import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

// A PostgreSQL cluster of its own, for tests and `pnpm chaos` that stop and start the server itself (a real restart,
// not a proxy's): initdb into a temporary directory, the server on a free port of 127.0.0.1 (and its socket in that
// directory), run with the machine's own binaries (Debian's /usr/lib/postgresql/<version>/bin). PostgreSQL refuses
// to run as root, so as root every command runs as the `postgres` user (runuser).

const run = promisify(execFile);

/** The newest server binaries installed, or undefined. */
function serverBinaries(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((name) => existsSync(join(base, name, 'bin', 'pg_ctl')) && existsSync(join(base, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] && join(base, versions[0], 'bin');
}

const asRoot = userInfo().uid === 0;

/** Why no private cluster can run here, or undefined when one can. */
export function privateClusterUnavailable(): string | undefined {
  if (!serverBinaries()) return 'no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql)';
  if (asRoot && !existsSync('/usr/sbin/runuser')) return 'running as root without runuser (util-linux), so PostgreSQL cannot be started';
  return undefined;
}

export interface PrivateCluster {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** `pg_ctl stop -m fast`: every backend is ended, the server gone, once it resolves */
  stop(): Promise<void>;
  /** `pg_ctl start` and wait: resolves once the server accepts connections */
  start(): Promise<void>;
  /** stops the server and removes its directory */
  destroy(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** initdb, then start: a running cluster with trust authentication for `postgres` on 127.0.0.1. */
export async function startPrivateCluster(): Promise<PrivateCluster> {
  const bin = serverBinaries();
  const missing = privateClusterUnavailable();
  if (!bin || missing) throw new Error(`no private PostgreSQL cluster here: ${missing}`);
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-pg-'));
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(group.trim()));
  }
  const as = (command: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args]) : run(join(bin, command), args);
  const data = join(dir, 'data');
  await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c autovacuum=off`;
  const start = async () => {
    await as('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  };
  const stop = async () => {
    await as('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
  };
  await start();
  let destroyed = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
