import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { type Run, runProgram } from './built-cli.js';

// An app in another repository, made on this machine: a project in a temporary directory outside every pnpm
// workspace that installs the packed @latchkey/client beside tools of its own (the GraphQL Code Generator,
// TypeScript), with no network: from the machine's pnpm store, which the workspace's own install filled.
//
// Why the project is given a lockfile: `pnpm install --offline` resolves each version range from pnpm's metadata
// cache, and an install from a lockfile (the workspace's `pnpm install --frozen-lockfile`, CI's first step on a clean
// clone) never fills that cache: it fetches tarballs by the lockfile's integrity into the store and resolves nothing.
// So the project gets what an online install would have resolved, taken from the workspace's pnpm-lock.yaml: the same
// versions and their integrity, which pnpm then finds in the store (`--frozen-lockfile --offline`). The packed client
// is a `file:` tarball in it, with its own integrity and the dependencies its packed package.json declares.

/** The workspace's root (pnpm-workspace.yaml, pnpm-lock.yaml, packages/client). */
export const WORKSPACE = fileURLToPath(new URL('../../../../', import.meta.url));

/** The registry pnpm is given outside: a closed port on this machine, so any request to a registry fails. */
export const UNREACHABLE_REGISTRY = 'http://127.0.0.1:9/';

/** Throws, naming the step and showing the child's output, unless it exited 0. */
export function expectSuccess(step: string, result: Run): Run {
  if (result.code !== 0) {
    throw new Error(`${step} exited ${result.code} after ${result.ms} ms\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`);
  }
  return result;
}

/**
 * `pnpm ...args` in `cwd` with the registry unreachable; HOME is kept for pnpm's own configuration, and nothing else
 * of this process's environment (the npm_config_* a parent pnpm sets) is passed on.
 */
export function pnpm(args: string[], cwd: string, timeoutMs = 120_000): Promise<Run> {
  return runProgram('pnpm', args, { HOME: process.env['HOME'], npm_config_registry: UNREACHABLE_REGISTRY }, cwd, timeoutMs);
}

/** Packs packages/client as `pnpm publish` would, into `destination`; answers the tarball's path. */
export async function packClient(destination: string): Promise<string> {
  expectSuccess(
    'pnpm --filter @latchkey/client pack',
    await pnpm(['--filter', '@latchkey/client', 'pack', '--pack-destination', destination], WORKSPACE),
  );
  const tarballs = readdirSync(destination).filter((name) => name.endsWith('.tgz'));
  if (tarballs.length !== 1) throw new Error(`pnpm pack left ${tarballs.length} tarballs in ${destination}: ${tarballs.join(', ')}`);
  return path.join(destination, tarballs[0]!);
}

/** The paths in a tarball (`package/...`), and one file of it as text. */
export async function tarballEntries(tarball: string): Promise<string[]> {
  return expectSuccess('tar tzf', await runProgram('tar', ['tzf', tarball], {}, path.dirname(tarball)))
    .stdout.split('\n')
    .filter(Boolean);
}
async function tarballFile(tarball: string, entry: string): Promise<string> {
  return expectSuccess(`tar xzf ${entry}`, await runProgram('tar', ['xzf', tarball, '-O', entry], {}, path.dirname(tarball))).stdout;
}

/** The first ancestor of `dir` (itself included) that is a pnpm workspace's root, if any. */
export function workspaceRootAbove(dir: string): string | undefined {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if (existsSync(path.join(at, 'pnpm-workspace.yaml'))) return at;
    if (path.dirname(at) === at) return undefined;
  }
}

interface Resolved {
  specifier: string;
  version: string;
}
interface Snapshot {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
interface Lockfile {
  lockfileVersion: string;
  settings?: unknown;
  importers: Record<string, Partial<Record<'dependencies' | 'devDependencies' | 'optionalDependencies', Record<string, Resolved>>>>;
  packages: Record<string, unknown>;
  snapshots: Record<string, Snapshot>;
}

/** The one resolution the workspace's projects have for `name` (another version would be another app's choice). */
function resolvedInWorkspace(lockfile: Lockfile, name: string): Resolved {
  const found = new Map<string, Resolved>();
  for (const importer of Object.values(lockfile.importers)) {
    for (const group of [importer.dependencies, importer.devDependencies, importer.optionalDependencies]) {
      const entry = group?.[name];
      if (entry && !entry.version.startsWith('link:')) found.set(entry.version, entry);
    }
  }
  if (found.size !== 1) {
    throw new Error(
      `the workspace resolves ${name} to ${found.size === 0 ? 'nothing' : [...found.keys()].join(' and ')}: expected one version`,
    );
  }
  return [...found.values()][0]!;
}

/** `name@1.2.3(peer@4.5.6)` -> `name@1.2.3`: a snapshot's key without its peers, the key of its package. */
const packageKey = (snapshotKey: string) => snapshotKey.replace(/\(.*$/, '');

/**
 * Writes an app's package.json and pnpm-lock.yaml in `dir`: the packed client (copied beside them) as a dependency,
 * and `devDependencies` at the versions the workspace uses. Peers of the client must be among those.
 */
export async function writeOutsideProject(dir: string, tarball: string, devDependencies: string[]): Promise<void> {
  const lockfile = parse(readFileSync(path.join(WORKSPACE, 'pnpm-lock.yaml'), 'utf8')) as Lockfile;
  const tools = Object.fromEntries(devDependencies.map((name) => [name, resolvedInWorkspace(lockfile, name)]));
  const packed = JSON.parse(await tarballFile(tarball, 'package/package.json')) as {
    name: string;
    version: string;
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  const tarballName = path.basename(tarball);
  copyFileSync(tarball, path.join(dir, tarballName));

  // The client's own dependencies, as its packed package.json declares them: each must be a registry package the
  // workspace installs in that version (a workspace package, unpublished, would have no such resolution).
  const clientDependencies: Record<string, string> = {};
  for (const [name, range] of Object.entries(packed.dependencies ?? {})) {
    const resolved = resolvedInWorkspace(lockfile, name);
    if (resolved.specifier !== range)
      throw new Error(`the packed client asks for ${name}@${range}; the workspace installs ${resolved.specifier}`);
    clientDependencies[name] = resolved.version;
  }
  const peers = Object.keys(packed.peerDependencies ?? {}).sort();
  for (const name of peers) {
    if (!tools[name]) throw new Error(`the packed client's peer ${name} is not among the app's dependencies`);
    clientDependencies[name] = tools[name].version;
  }
  const reference = `file:${tarballName}`;
  const clientVersion = `${reference}${peers.map((name) => `(${name}@${tools[name]!.version})`).join('')}`;

  const packages: Record<string, unknown> = {
    [`${packed.name}@${reference}`]: {
      resolution: { integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`, tarball: reference },
      version: packed.version,
      ...(packed.peerDependencies ? { peerDependencies: packed.peerDependencies } : {}),
    },
  };
  const snapshots: Record<string, Snapshot> = { [`${packed.name}@${clientVersion}`]: { dependencies: clientDependencies } };
  const visit = (name: string, version: string) => {
    const key = `${name}@${version}`;
    if (snapshots[key]) return;
    const snapshot = lockfile.snapshots[key];
    if (!snapshot) throw new Error(`pnpm-lock.yaml has no snapshot ${key}`);
    snapshots[key] = snapshot;
    packages[packageKey(key)] = lockfile.packages[packageKey(key)];
    for (const [dependency, resolved] of Object.entries({ ...snapshot.dependencies, ...snapshot.optionalDependencies }))
      visit(dependency, resolved);
  };
  for (const [name, { version }] of Object.entries(tools)) visit(name, version);
  for (const [name, version] of Object.entries(clientDependencies)) visit(name, version);

  const manifest = {
    name: 'outside-app',
    private: true,
    type: 'module',
    dependencies: { [packed.name]: reference },
    devDependencies: Object.fromEntries(Object.entries(tools).map(([name, { specifier }]) => [name, specifier])),
  };
  const outsideLockfile = {
    lockfileVersion: lockfile.lockfileVersion,
    settings: lockfile.settings,
    importers: {
      '.': {
        dependencies: { [packed.name]: { specifier: reference, version: clientVersion } },
        devDependencies: tools,
      },
    },
    packages,
    snapshots,
  };
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // JSON is YAML, which pnpm reads. The workspace's patches (pnpm patch) are its own: an app installs the packages
  // as published, so their patch hashes leave the keys.
  writeFileSync(path.join(dir, 'pnpm-lock.yaml'), JSON.stringify(outsideLockfile, null, 2).replace(/\(patch_hash=[0-9a-f]+\)/g, ''));
}
