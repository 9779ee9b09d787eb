/**
 * Tests only: whether a test that needs an outside tool (PostgreSQL for an outage, nginx, Chromium) can run
 * here. Without the tool it is skipped with the reason printed, except under `CI=true`, where CI installs every
 * tool it needs: a missing one there is a failure of the run, never a silent skip.
 */
export function needsTool(tool: string, available: boolean, what: string): boolean {
  if (available) return true;
  if (process.env['CI'] === 'true') throw new Error(`CI=true but ${tool} is missing: ${what} cannot run`);
  process.stdout.write(`[latchkey tests] skipped (${tool} is missing here): ${what}\n`);
  return false;
}
