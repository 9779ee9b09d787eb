// `pnpm latchkey <command>`: runs the operator CLI (apps/api), building first only when a source is newer than
// the build, and then printing nothing of the build unless it fails: the command's own output is all there is.
// The schema commands are the exception: they run from the sources, never building (below).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'apps/api/dist/src/cli.js');
// Written after a build this script ran: turbo may answer from its cache without rewriting the outputs (a source
// touched but not changed), and the build must not run again on every command for that.
const stamp = join(root, 'apps/api/dist/.latchkey-built');

/** What a build reads: the schema, the code generator's configuration, every workspace's sources and settings. */
const INPUTS = [
  'schema',
  'codegen.ts',
  'package.json',
  'tsconfig.base.json',
  'apps/api/src',
  'apps/api/codegen',
  'apps/api/package.json',
  'apps/api/tsconfig.json',
  'apps/api/tsconfig.build.json',
];
for (const name of readdirSync(join(root, 'packages')))
  INPUTS.push(`packages/${name}/src`, `packages/${name}/package.json`, `packages/${name}/tsconfig.build.json`);

/** The newest modification time under `path` (0 when it does not exist); test files do not go into the build. */
function newest(path) {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return 0;
  }
  if (!stats.isDirectory()) return path.endsWith('.test.ts') ? 0 : stats.mtimeMs;
  let latest = 0;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

function isStale() {
  if (!existsSync(cli)) return true;
  const built = Math.max(statSync(cli).mtimeMs, existsSync(stamp) ? statSync(stamp).mtimeMs : 0);
  return INPUTS.some((input) => newest(join(root, input)) > built);
}

// `schema check` and `schema usage` read schema/, the operations and the database, and are asked while an edit leaves
// codegen, typecheck or the build failing: they run from the TypeScript sources (tsx; the workspace packages' "source"
// export condition), never building.
if (process.argv[2] === 'schema') {
  const sources = join(root, 'apps/api/src/cli.ts');
  const run = spawnSync(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), '--conditions=source', sources, ...process.argv.slice(2)],
    {
      stdio: 'inherit',
    },
  );
  process.exit(run.status ?? 1);
}

if (isStale()) {
  const turbo = join(root, 'node_modules/.bin/turbo');
  const build = spawnSync(turbo, ['run', 'build', '--output-logs=errors-only'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) {
    process.stderr.write(`latchkey: the build failed\n${build.stdout ?? ''}${build.stderr ?? ''}`);
    process.exit(build.status ?? 1);
  }
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}

// The CLI reads its command from process.argv: run it in this process (no second Node start-up).
process.argv = [process.argv[0], cli, ...process.argv.slice(2)];
await import(pathToFileURL(cli).href);
