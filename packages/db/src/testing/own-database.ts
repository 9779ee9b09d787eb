import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { sql } from 'drizzle-orm';
import { createDatabase, type DatabaseHandle } from '../client.js';
import { runMigrations } from '../migrate.js';
import { rowsOf } from '../rows.js';
import { ADMIN_TIMEOUT_MS, postgresTemplateFor, seedPgliteDataDir, testTempDir } from './template.js';

/**
 * Tests only: a fresh database on the PostgreSQL server of `adminUrl` (test files run in parallel and some
 * reseed, so each gets its own), dropped again by `drop()`. It is a copy of the run's migrated template when
 * the test setup made one on that server (see `template.ts`), else empty.
 */
export async function createOwnDatabase(adminUrl: string, label = 'test'): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `latchkey_${label.replace(/[^a-z0-9_]/g, '_')}_${randomBytes(6).toString('hex')}`;
  const admin = await createDatabase({ url: adminUrl, dataDir: tmpdir(), poolSize: 2, timeoutMs: ADMIN_TIMEOUT_MS });
  try {
    const template = postgresTemplateFor(adminUrl);
    await admin.db.execute(sql.raw(`create database ${name}${template ? ` template ${template}` : ''}`));
  } finally {
    await admin.close();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const again = await createDatabase({ url: adminUrl, dataDir: tmpdir(), poolSize: 2, timeoutMs: ADMIN_TIMEOUT_MS });
      try {
        await again.db.execute(sql.raw(`drop database if exists ${name} with (force)`));
      } finally {
        await again.close();
      }
    },
  };
}

export interface OwnDatabase {
  database: DatabaseHandle;
  dataDir: string;
  /** its URL, on PostgreSQL (for a client of a test's own) */
  url?: string;
  close(): Promise<void>;
}

/**
 * Tests only: the real database, migrated. PostgreSQL when DATABASE_URL is set (a database of its own, dropped
 * by `close`), else PGlite in a temporary directory (removed by `close`).
 */
export async function openOwnDatabase(label: string): Promise<OwnDatabase> {
  const dataDir = testTempDir(label);
  const adminUrl = process.env['DATABASE_URL'];
  const own = adminUrl ? await createOwnDatabase(adminUrl, label) : undefined;
  if (!own) seedPgliteDataDir(dataDir);
  const database = await createDatabase(own ? { url: own.url, dataDir, poolSize: 12 } : { dataDir });
  await runMigrations(database);
  return {
    database,
    dataDir,
    ...(own ? { url: own.url } : {}),
    async close() {
      await database.close();
      await own?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Benchmarks: the database `name` on the PostgreSQL server of `adminUrl`, dropped if it exists and created
 * empty (the caller migrates and seeds it); answers its URL.
 */
export async function recreateDatabase(adminUrl: string, name: string): Promise<string> {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  const admin = await createDatabase({ url: adminUrl, dataDir: tmpdir(), poolSize: 2, timeoutMs: ADMIN_TIMEOUT_MS });
  try {
    await admin.db.execute(sql.raw(`drop database if exists ${name} with (force)`));
    await admin.db.execute(sql.raw(`create database ${name}`));
  } finally {
    await admin.close();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Benchmarks: a reader of the process ids of the server backends connected to database `name` (what its clients'
 * statements cost is the CPU time of these processes, on the same machine). Close it when done.
 */
export async function openBackendPids(adminUrl: string, name: string): Promise<{ read(): Promise<number[]>; close(): Promise<void> }> {
  const admin = await createDatabase({ url: adminUrl, dataDir: tmpdir(), poolSize: 2, timeoutMs: ADMIN_TIMEOUT_MS });
  return {
    async read() {
      const result = await admin.db.execute(sql`select pid from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`);
      return rowsOf<{ pid: number }>(result).map((row) => Number(row.pid));
    },
    close: () => admin.close(),
  };
}
