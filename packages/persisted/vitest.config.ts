import { createRequire } from 'node:module';
import { SkipReport } from '@latchkey/db/testing/skip-report';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  // graphql 16 has no "exports": Node loads its CommonJS build, so must the tests (one realm).
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] },
  // Opening a database of its own (and migrating it) can take a while on a busy CI machine.
  // Every test database starts as a copy of one migrated template made per run.
  test: {
    // Test files share one module graph per worker: each file re-importing the app cost more CPU than its tests.
    isolate: false,
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: [require.resolve('@latchkey/db/testing/template')],
    // Every skipped test file is listed once, at the end, with why.
    reporters: ['default', new SkipReport()],
  },
});
