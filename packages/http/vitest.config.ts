import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Test files share one module graph per worker: each file re-importing its modules cost more CPU than its tests.
  test: { include: ['src/**/*.test.ts'], isolate: false },
});
