// A package's `codegen` (apps/api: `server`, packages/client: `client`): graphql-codegen with codegen.ts for that
// target, skipped when its outputs are already what its inputs make.
//
// Why the skip: turbo hashes a task's committed outputs (its `outputs`: src/generated/**, and packages/client's
// schema.graphql; tracked by git) with its inputs, so the
// run after codegen changed them misses the cache once more, and `pnpm typecheck` after an SDL edit would generate
// everything again (seconds, with model-served.cjs's TypeScript program). The fingerprint here is of the same files
// turbo reads for the task (its `inputs` in the package's turbo.json, the declarations of the packages it builds
// first, and the outputs), written after a run: equal, the outputs are those of these inputs and nothing runs.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = process.argv[2];
const packageDir = { server: join(root, 'apps/api'), client: join(root, 'packages/client') }[target];
if (!packageDir) {
  process.stderr.write('usage: node scripts/codegen.mjs server|client\n');
  process.exit(2);
}
const task = JSON.parse(readFileSync(join(packageDir, 'turbo.json'), 'utf8')).tasks.codegen;

/** Files under `dir` (recursively) whose path relative to it matches `test`. */
function filesUnder(dir, test = () => true, base = dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path, test, base);
    return test(relative(base, path)) ? [path] : [];
  });
}

/** The files one `inputs` or `outputs` entry names: a path, `dir/*.ext` or `dir/**` (the forms the codegen tasks use). */
function filesOf(input) {
  const path = input.startsWith('$TURBO_ROOT$/') ? join(root, input.slice('$TURBO_ROOT$/'.length)) : join(packageDir, input);
  const star = /^(.*)\/\*\*$/.exec(path) ?? /^(.*)\/\*(\.[\w.]+)$/.exec(path);
  if (!star) return existsSync(path) ? [path] : [];
  const [, dir, extension] = star;
  return extension ? filesUnder(dir, (file) => !file.includes('/') && file.endsWith(extension)) : filesUnder(dir);
}

/** The declarations of the workspace packages the task builds first (`@latchkey/db#build` -> packages/db/dist). */
function declarationsOfDependencies() {
  const names = new Map(
    readdirSync(join(root, 'packages')).map((dir) => [
      JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')).name,
      dir,
    ]),
  );
  return (task.dependsOn ?? [])
    .map((dependency) => names.get(dependency.replace(/#build$/, '')))
    .filter(Boolean)
    .flatMap((dir) => filesUnder(join(root, 'packages', dir, 'dist'), (file) => file.endsWith('.d.ts')));
}

function fingerprint() {
  const hash = createHash('sha256');
  const files = [
    ...task.inputs.flatMap(filesOf),
    ...declarationsOfDependencies(),
    ...task.outputs.flatMap(filesOf),
    join(root, 'pnpm-lock.yaml'),
  ];
  for (const file of [...new Set(files)].sort())
    hash.update(`${relative(root, file)}\0${statSync(file).size}\0`).update(readFileSync(file));
  return hash.digest('hex');
}

const stamp = join(root, 'node_modules/.cache/latchkey-codegen', `${target}.json`);
const before = fingerprint();
if (existsSync(stamp) && JSON.parse(readFileSync(stamp, 'utf8')).fingerprint === before) {
  process.stdout.write(`codegen (${target}): its generated files are up to date with their inputs\n`);
  process.exit(0);
}
const codegen = spawnSync(join(root, 'node_modules/.bin/graphql-codegen'), ['--config', 'codegen.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, CODEGEN_TARGET: target },
});
if (codegen.status !== 0) process.exit(codegen.status ?? 1);
mkdirSync(dirname(stamp), { recursive: true });
writeFileSync(stamp, `${JSON.stringify({ fingerprint: fingerprint() })}\n`);
