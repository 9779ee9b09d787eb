// Run by migrate.test.ts in separate Node processes to race migrations for real.
// Plain .mjs importing the build because tsx is not available. The URL comes from the
// environment, not argv, so it does not show up in process listings.
import { createDatabase, runMigrations } from '../dist/index.js';

const handle = await createDatabase({ url: process.env.LATCHKEY_TEST_DB_URL, dataDir: process.env.LATCHKEY_TEST_DATA_DIR });
try {
  // Connect first so the race below is between migrations, not TCP handshakes.
  if (!(await handle.ping(10_000))) throw new Error('database not reachable');
  // Start together: the parent releases both children at once via stdin.
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  await runMigrations(handle);
  process.stdout.write('migrated\n');
} finally {
  await handle.close();
}
