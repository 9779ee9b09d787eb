import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN, requireBuild, run, STACK_TRACE } from './support/built-cli.js';

// The server entry point refuses to start in production without a signing key (spec "Access tokens" rule 4).
// The built entry points and how they are run: support/built-cli.ts.

requireBuild();

describe('server start-up (dist/src/main.js)', () => {
  let workDir: string;
  beforeAll(() => {
    workDir = mkdtempSync(path.join(tmpdir(), 'latchkey-main-'));
  });
  afterAll(() => {
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  const production = { NODE_ENV: 'production', PORT: '0', LOG_LEVEL: 'info' };

  it('rule 4: production without SIGNING_KEY exits 1 by itself with a clear message naming SIGNING_KEY, no stack trace', async () => {
    // "By itself", not how fast: a process that hangs (waits for a database, listens) is killed at the helper's
    // 15 s, far above any real start-up, and its exit code is then null, not 1.
    const result = await run(MAIN, [], { ...production, DATA_DIR: path.join(workDir, 'no-key') }, workDir, 15_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('SIGNING_KEY');
    expect(result.stderr).toMatch(/^latchkey: /);
    expect(result.stderr).not.toMatch(STACK_TRACE);
    expect(result.stdout).toBe('');
    // and no development key was generated in its place
    expect(existsSync(path.join(workDir, 'no-key', 'keys'))).toBe(false);
  });

  it('rule 4: production with SIGNING_KEY="" (empty) is refused the same way', async () => {
    const result = await run(MAIN, [], { ...production, SIGNING_KEY: '', DATA_DIR: path.join(workDir, 'empty-key') }, workDir, 15_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('SIGNING_KEY');
    expect(result.stderr).not.toMatch(STACK_TRACE);
  });
});
