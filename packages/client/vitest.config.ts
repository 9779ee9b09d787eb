import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  // graphql 16 has no "exports": Node loads its CommonJS build, so must the tests (one realm).
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] },
  // Test files share one module graph per worker: each file re-importing its modules cost more CPU than its tests.
  test: { include: ['src/**/*.test.ts'], isolate: false },
});
