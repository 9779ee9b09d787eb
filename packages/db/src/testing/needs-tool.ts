import { appendFileSync } from 'node:fs';

/** Where test workers record what they skipped (set by the skip report, `skip-report.ts`); unset: printed at once. */
export const SKIP_LOG_VARIABLE = 'LATCHKEY_SKIP_LOG';

/**
 * Tests only: whether a test that needs an outside tool (Chromium, nginx, Redis, a PostgreSQL server for an
 * outage) can run here. Without the tool it is skipped and the reason recorded, printed once at the end of the
 * run with how to install it; under `CI=true`, where CI installs every tool it needs, a missing one fails the
 * run instead, never a silent skip.
 */
export function needsTool(tool: string, available: boolean, what: string): boolean {
  if (available) return true;
  if (process.env['CI'] === 'true') throw new Error(`CI=true but ${tool} is missing: ${what} cannot run (.ci/run installs it)`);
  const line = `${tool} is missing here: ${what}`;
  const log = process.env[SKIP_LOG_VARIABLE];
  if (log) appendFileSync(log, `${line}\n`);
  else process.stdout.write(`[latchkey tests] skipped (${line})\n`);
  return false;
}
