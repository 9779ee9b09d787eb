import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { SkipReport } from '@latchkey/db/testing/skip-report';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Node loads graphql 16 through its CommonJS "main" (it has no "exports" map); Vite would pick the
    // .mjs "module" build for our files only, and graphql refuses objects from the other copy.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The services tests start spend budgets that never refuse (API_BUDGET_FILE), except where a test of the budgets
    // gives its own: a suite's loops are not the fair use the defaults are sized for.
    env: { API_BUDGET_FILE: fileURLToPath(new URL('test/fixtures/budget-never-refuses.json', import.meta.url)) },
    // Every skipped test file is listed once, at the end, with why (a missing tool, TEST_REDIS_URL unset, PGlite).
    reporters: ['default', new SkipReport()],
    // Every test database starts as a copy of one migrated template made per run.
    globalSetup: [require.resolve('@latchkey/db/testing/template')],
    pool: 'forks',
    // Test files share one module graph per worker (files run one after another in it): re-importing the app for
    // every file cost more CPU than most files' tests. Files keep no state in modules they share.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 90_000,
    // Each file starts its own server (and, without DATABASE_URL, its own embedded database).
    fileParallelism: true,
    maxWorkers: 2,
  },
});
