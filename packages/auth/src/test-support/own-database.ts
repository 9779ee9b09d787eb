import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDatabase, runMigrations, sql, type DatabaseHandle } from '@latchkey/db';

/**
 * Tests only: the real database, migrated. PostgreSQL when DATABASE_URL is set (a database of its own, dropped
 * by `close`, since test files run in parallel), else PGlite in a temporary directory.
 */
export async function openOwnDatabase(label: string): Promise<{ database: DatabaseHandle; dataDir: string; close(): Promise<void> }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `latchkey-${label}-`));
  const adminUrl = process.env['DATABASE_URL'];
  let drop = async () => undefined as void;
  let database: DatabaseHandle;
  if (adminUrl) {
    const name = `latchkey_auth_${randomBytes(6).toString('hex')}`;
    const admin = await createDatabase({ url: adminUrl, dataDir, poolSize: 2 });
    await admin.db.execute(sql.raw(`create database ${name}`));
    await admin.close();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    database = await createDatabase({ url: url.toString(), dataDir, poolSize: 12 });
    drop = async () => {
      const again = await createDatabase({ url: adminUrl, dataDir, poolSize: 2 });
      await again.db.execute(sql.raw(`drop database if exists ${name} with (force)`));
      await again.close();
    };
  } else {
    database = await createDatabase({ dataDir });
  }
  await runMigrations(database);
  return {
    database,
    dataDir,
    async close() {
      await database.close();
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
