import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openBackendPids, recreateDatabase } from '@latchkey/db/testing';

// Each latchkey under test gets a database of its own, seeded with the benchmark data set (`pnpm latchkey seed
// --bench`): a fresh DATA_DIR (PGlite) by default, or a new `latchkey_bench*` database on DATABASE_URL's server.

export interface BenchDatabase {
  kind: 'pglite' | 'postgresql';
  /** what the server and the CLI need besides DATA_DIR (DATABASE_URL on PostgreSQL) */
  env: Record<string, string>;
  /** the database backends serving the server (PostgreSQL only), for their CPU time */
  backendPids?: () => Promise<number[]>;
  close(): Promise<void>;
}

/** The database of the latchkey labelled `label` (`''` for the only one; a suffix such as `other` beside it). */
export async function benchDatabase(label: string): Promise<BenchDatabase> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) return { kind: 'pglite', env: {}, close: async () => {} };
  const name = `latchkey_bench${label ? `_${label.replace(/[^a-z0-9]+/g, '_')}` : ''}`;
  const url = await recreateDatabase(adminUrl, name);
  const backends = await openBackendPids(adminUrl, name);
  return { kind: 'postgresql', env: { DATABASE_URL: url }, backendPids: backends.read, close: backends.close };
}

/**
 * `pnpm latchkey seed --bench` with this checkout's CLI (the data set is this build's); answers its JSON line. The
 * command refuses production, so it runs in development against the database the production server then opens.
 */
export function seedBenchData(env: Record<string, string>): Record<string, unknown> {
  const cli = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
  const result = spawnSync(process.execPath, [cli, 'seed', '--bench'], {
    env: { ...process.env, ...env, NODE_ENV: 'development' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`latchkey seed --bench failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim()) as Record<string, unknown>;
}
