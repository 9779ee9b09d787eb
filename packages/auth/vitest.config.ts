import { createRequire } from 'node:module';
import { SkipReport } from '@latchkey/db/testing/skip-report';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  test: {
    // Test files share one module graph per worker: each file re-importing the app cost more CPU than its tests.
    isolate: false,
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Every skipped test file is listed once, at the end, with why (a missing tool, TEST_REDIS_URL unset, PGlite).
    reporters: ['default', new SkipReport()],
    // Every test database starts as a copy of one migrated template made per run.
    globalSetup: [require.resolve('@latchkey/db/testing/template')],
  },
});
