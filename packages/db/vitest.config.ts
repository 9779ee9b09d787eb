import { defineConfig } from 'vitest/config';
import { SkipReport } from './src/testing/skip-report.js';

export default defineConfig({
  test: {
    // Test files share one module graph per worker: each file re-importing the app cost more CPU than its tests.
    isolate: false,
    include: ['src/**/*.test.ts'],
    // PGlite boots a WASM Postgres per test file and the PostgreSQL suite spawns child
    // processes and creates/drops databases: all slow compared to unit tests.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Every skipped test file is listed once, at the end, with why (no PostgreSQL server on a PGlite run).
    reporters: ['default', new SkipReport()],
    // Every test database made by ./src/testing starts as a copy of one migrated template made per run.
    globalSetup: ['./src/testing/template.ts'],
  },
});
