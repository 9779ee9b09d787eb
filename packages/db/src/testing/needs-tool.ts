import { appendFileSync } from 'node:fs';

/** Where test workers record what they skipped and why (set by the skip report, `skip-report.ts`); unset: printed at once. */
export const SKIP_LOG_VARIABLE = 'LATCHKEY_SKIP_LOG';

/** One skipped group of tests, as a worker records it for the skip report. */
export interface SkipRecord {
  /** the test file (absolute), when the worker knows it */
  file?: string;
  /** the tests that do not run, e.g. "the reverse-proxy tests" */
  what: string;
  /** why, in words that say what to install or set */
  cause: string;
}

/** The test file this worker is collecting or running (vitest keeps it in its worker state). */
function currentTestFile(): string | undefined {
  return (globalThis as { __vitest_worker__?: { filepath?: string } }).__vitest_worker__?.filepath;
}

/**
 * Tests only: whether a group of tests can run here. `cause` is why it cannot (undefined when it can), said as what
 * to install or set. A skipped group is recorded with its file, and the run ends with one list of every skip and
 * its cause (skip-report.ts). Under `CI=true` a skip CI should never see fails the run instead (`inCi: 'fail'`, for
 * a missing tool, which .ci/run installs); `'skip'` is for skips by design (the PostgreSQL-only tests of the PGlite
 * suite, which CI runs on PostgreSQL too).
 */
export function runsHere(what: string, cause: string | undefined, { inCi = 'fail' }: { inCi?: 'fail' | 'skip' } = {}): boolean {
  if (cause === undefined) return true;
  if (inCi === 'fail' && process.env['CI'] === 'true') throw new Error(`CI=true but ${what} cannot run: ${cause} (.ci/run provides it)`);
  const record: SkipRecord = { what, cause, ...(currentTestFile() ? { file: currentTestFile()! } : {}) };
  const log = process.env[SKIP_LOG_VARIABLE];
  if (log) appendFileSync(log, `${JSON.stringify(record)}\n`);
  else process.stdout.write(`[latchkey tests] skipped: ${what} (${cause})\n`);
  return false;
}

/** Tests that need a PostgreSQL server (outages, several instances on one database): skipped on PGlite by design. */
export function onPostgres(what: string): boolean {
  return runsHere(what, process.env['DATABASE_URL'] ? undefined : 'DATABASE_URL is unset: this run is on the embedded PGlite', {
    inCi: 'skip',
  });
}

/** Tests about the embedded database itself: skipped on PostgreSQL by design. */
export function onPglite(what: string): boolean {
  return runsHere(what, process.env['DATABASE_URL'] ? 'DATABASE_URL is set: this run is on PostgreSQL' : undefined, { inCi: 'skip' });
}

/** Tests that need a Redis server: TEST_REDIS_URL names it (the services under test keep their own stores). */
export function redisForTests(what: string): string | undefined {
  const url = process.env['TEST_REDIS_URL'];
  return runsHere(what, url ? undefined : 'TEST_REDIS_URL is unset (e.g. TEST_REDIS_URL=redis://127.0.0.1:6379)') ? url : undefined;
}
