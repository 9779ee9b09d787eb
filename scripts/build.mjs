// `pnpm start`'s build (and `pnpm bench`'s, `pnpm chaos`'s): turbo's build of the workspace, told as lines a person
// can follow on stderr (what is built, then how long it took), turbo's own output only when a task fails. The
// build emits JavaScript without checking types (`tsc --noCheck`, so a first start takes about a minute, not six);
// `pnpm typecheck`, `pnpm test` and CI check them.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();
const seconds = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
const say = (line) => process.stderr.write(`${line}\n`);

say('latchkey: building what changed (a fresh clone builds 7 packages and generates code: about 20 s on a 2-core machine)');
const turbo = spawn(join(root, 'node_modules/.bin/turbo'), ['run', 'build', '--output-logs=new-only'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'pipe'],
});
let output = '';
let built = 0;
let current = 0;
const onData = (chunk) => {
  output += chunk;
  const lines = output.split('\n');
  for (const line of lines.slice(current, -1)) {
    // "@latchkey/db:build: cache miss, executing 3f2a..." when a task starts; a cache hit needs no work.
    const task = /^(\S+?):(\w+): cache miss/.exec(line);
    if (task) {
      built += 1;
      say(`  ${task[2] === 'build' ? 'building' : 'generating code for'} ${task[1]}`);
    }
  }
  current = lines.length - 1;
};
turbo.stdout.setEncoding('utf8').on('data', onData);
turbo.stderr.setEncoding('utf8').on('data', onData);
turbo.on('close', (code, signal) => {
  if (code !== 0) {
    say(`latchkey: the build failed${signal ? ` (${signal})` : ''}; turbo said:\n${output}`);
    process.exit(code ?? 1);
  }
  say(built === 0 ? 'latchkey: the build is up to date' : `latchkey: built in ${seconds()}`);
});
