import { fileURLToPath } from 'node:url';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import { driverOf, type DatabaseHandle } from './client.js';

// `../drizzle` is the package's drizzle-kit output both from src/ (tests) and dist/.
const MIGRATIONS_FOLDER = fileURLToPath(new URL('../drizzle', import.meta.url));

/**
 * Session-level advisory lock key serialising migrations across processes sharing one
 * PostgreSQL database. Arbitrary but fixed: every latchkey instance must use the same
 * value. Passed as text and cast because it exceeds JS's safe integer range.
 */
const MIGRATION_LOCK_KEY = '7305982164410371201';

/**
 * Applies pending drizzle-kit migrations. Idempotent: the migrator records applied
 * migrations in drizzle.__drizzle_migrations and skips them next time.
 */
export async function runMigrations(handle: DatabaseHandle): Promise<void> {
  const driver = driverOf(handle);
  if (driver.kind === 'pglite') {
    // A PGlite directory is owned by this one process: nothing to race with.
    await migratePglite(driver.db, { migrationsFolder: MIGRATIONS_FOLDER });
    return;
  }

  // Without the lock two instances starting together both see "not applied" and both
  // run CREATE TABLE; one fails. The lock must be session-level and live on one
  // dedicated connection (a pooled query could release it on another connection).
  // The migrator itself runs on another connection because reserved connections cannot begin
  // transactions. Both live on a client of their own: a migration may run longer than a request's deadline.
  const sql = driver.pool.open({ max: 2 });
  try {
    const lockConn = await sql.reserve();
    try {
      await lockConn`select pg_advisory_lock(${MIGRATION_LOCK_KEY}::bigint)`;
      try {
        await migratePostgres(drizzlePostgres({ client: sql }), { migrationsFolder: MIGRATIONS_FOLDER });
      } finally {
        // If this fails the connection is broken and the server already dropped the lock.
        await lockConn`select pg_advisory_unlock(${MIGRATION_LOCK_KEY}::bigint)`.catch(() => {});
      }
    } finally {
      lockConn.release();
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}
