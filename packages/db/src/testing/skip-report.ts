import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { SKIP_LOG_VARIABLE, type SkipRecord } from './needs-tool.js';

/** Set by `pnpm test` (scripts/test.mjs): each package's list goes there, and the run prints them as one. */
export const SKIP_REPORT_DIR_VARIABLE = 'TEST_SKIP_REPORT_DIR';

/** One test file with skipped tests: how many, and the causes its workers recorded (`runsHere`). */
export interface SkippedFile {
  /** relative to the repository root */
  file: string;
  skipped: number;
  causes: { what: string; cause: string }[];
}

/** The repository root, from this module's place (packages/db/{src,dist}/testing). */
const ROOT = join(import.meta.dirname, '../../../..');

/** The list as a person reads it, or '' when nothing was skipped. */
export function formatSkipReport(files: readonly SkippedFile[]): string {
  if (files.length === 0) return '';
  const total = files.reduce((sum, file) => sum + file.skipped, 0);
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  const lines = [`\n[latchkey tests] ${plural(total, 'test')} skipped in ${plural(files.length, 'file')}, and why:`];
  for (const file of [...files].sort((a, b) => a.file.localeCompare(b.file))) {
    const causes = file.causes.length > 0 ? file.causes.map(({ what, cause }) => `${what}: ${cause}`) : ['no cause recorded (it.skip?)'];
    lines.push(`  - ${file.file} (${file.skipped}): ${[...new Set(causes)].join('; ')}`);
  }
  lines.push(
    '  Tools: apt-get install chromium nginx redis-server, TEST_REDIS_URL=redis://127.0.0.1:6379; the PostgreSQL-only',
    '  tests run with DATABASE_URL=postgres://postgres@127.0.0.1:5432/test (README, "Quick start").',
  );
  return `${lines.join('\n')}\n`;
}

/**
 * A vitest reporter: at the end of the run, every test file with skipped tests (vitest's own count, so none is
 * missed) with the causes its workers recorded. Under `pnpm test` the list of each package is written to
 * TEST_SKIP_REPORT_DIR and scripts/test.mjs prints them as one list after every package has run.
 */
export class SkipReport implements Reporter {
  private dir: string | undefined;
  private log = '';

  onInit(): void {
    this.dir = mkdtempSync(join(tmpdir(), 'latchkey-skips-'));
    this.log = join(this.dir, 'skipped.log');
    process.env[SKIP_LOG_VARIABLE] = this.log;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let records: SkipRecord[] = [];
    try {
      records = readFileSync(this.log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as SkipRecord);
    } catch {
      // no worker recorded a skip
    }
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    const files: SkippedFile[] = [];
    for (const module of modules) {
      const skipped = [...module.children.allTests()].filter((test) => test.result().state === 'skipped').length;
      const causes = records.filter((record) => record.file === module.moduleId).map(({ what, cause }) => ({ what, cause }));
      if (skipped > 0 || causes.length > 0) files.push({ file: relative(ROOT, module.moduleId), skipped, causes });
    }
    const shared = process.env[SKIP_REPORT_DIR_VARIABLE];
    // One file per vitest run (a package may run vitest more than once: packages/db does).
    if (shared)
      writeFileSync(
        join(shared, `${relative(ROOT, process.cwd()).replaceAll('/', '-') || 'root'}-${process.pid}.json`),
        JSON.stringify(files),
      );
    else process.stdout.write(formatSkipReport(files));
  }
}
