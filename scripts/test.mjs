// `pnpm test`: turbo's test task in every package (codegen, typecheck and build first), then one list of every
// test skipped in the whole run and why. Each package's skip report (@latchkey/db/testing/skip-report) writes its
// part to TEST_SKIP_REPORT_DIR; this prints them together once turbo is done, and exits as turbo did.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(join(tmpdir(), 'latchkey-skip-report-'));
const turbo = spawnSync(join(root, 'node_modules/.bin/turbo'), ['run', 'test', '--continue', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, TEST_SKIP_REPORT_DIR: dir },
});
const files = readdirSync(dir).flatMap((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')));
rmSync(dir, { recursive: true, force: true });
if (files.length > 0) {
  // Built by the run itself (the list is only written by tests that ran).
  const { formatSkipReport } = await import(pathToFileURL(join(root, 'packages/db/dist/testing/skip-report.js')).href);
  process.stdout.write(formatSkipReport(files));
}
process.exit(turbo.status ?? 1);
