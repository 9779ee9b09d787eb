import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests skipped for a missing tool (Chromium, Redis) are listed once, at the end; every test database
    // starts as a copy of one migrated template made per run.
    globalSetup: [require.resolve('@latchkey/db/testing/skip-report'), require.resolve('@latchkey/db/testing/template')],
  },
});
