import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SKIP_LOG_VARIABLE } from './needs-tool.js';

/**
 * A vitest globalSetup: test workers record the tests they skip for a missing tool (`needsTool`), and the run
 * ends with one summary of them instead of a line per file.
 */
export default function skipReport(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-skips-'));
  const log = join(dir, 'skipped.log');
  process.env[SKIP_LOG_VARIABLE] = log;
  return () => {
    let lines: string[] = [];
    try {
      lines = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    } catch {
      // nothing was skipped
    }
    rmSync(dir, { recursive: true, force: true });
    if (lines.length === 0) return;
    const counts = new Map<string, number>();
    for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
    process.stdout.write(`\n[latchkey tests] skipped for a missing tool (${lines.length} test files or groups):\n`);
    for (const [line, count] of counts) process.stdout.write(`  - ${line}${count > 1 ? ` (x${count})` : ''}\n`);
    process.stdout.write('  Install them to run everything (README, "Quick start"): apt-get install chromium nginx redis-server\n');
  };
}
