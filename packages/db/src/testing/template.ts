import { randomBytes } from 'node:crypto';
import { accessSync, constants, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { createDatabase } from '../client.js';
import { runMigrations } from '../migrate.js';

// Tests open hundreds of databases. Migrating each one from nothing costs 2-3 s on PGlite (its initdb, in
// WebAssembly) and ~100 ms on PostgreSQL; a migrated template made once per test run and copied per database
// costs ~0.2 s and ~0.1 s. The template is made by the vitest globalSetup below and named to the test
// workers in environment variables (a worker inherits the environment of the run that spawned it).

/**
 * The deadline of creating and dropping whole databases (`with (force)` waits for other sessions to end): far
 * above DATABASE_TIMEOUT's default, because a busy shared server (CI running several test processes) may take
 * seconds, and a test's cleanup must not fail for that.
 */
export const ADMIN_TIMEOUT_MS = 60_000;

/** Directory for this run's temporary data directories (a RAM-backed one when the machine has it). */
export const TEST_TMP_VARIABLE = 'LATCHKEY_TEST_TMP';
/** The migrated PGlite data directory (`<dir>/pglite`) of this run, without DATABASE_URL. */
export const PGLITE_TEMPLATE_VARIABLE = 'LATCHKEY_TEST_PGLITE_TEMPLATE';
/** The migrated template database on DATABASE_URL's server, with DATABASE_URL. */
export const POSTGRES_TEMPLATE_VARIABLE = 'LATCHKEY_TEST_TEMPLATE_DATABASE';

/**
 * Where a test's data directories go: under the run's directory when the globalSetup made one, else the OS
 * temporary directory. On disk, writing a 40 MB PGlite directory takes ~0.9 s here; in /dev/shm, 40 ms.
 */
export function testTempDir(label = 'test'): string {
  const base = process.env[TEST_TMP_VARIABLE];
  return mkdtempSync(path.join(base && existsSync(base) ? base : tmpdir(), `latchkey-${label}-`));
}

/**
 * Puts a copy of the run's migrated PGlite template at `<dataDir>/pglite`, where `createDatabase({ dataDir })`
 * opens it; without a template (a test file run outside the configured setup) the database starts empty and
 * is migrated as usual.
 */
export function seedPgliteDataDir(dataDir: string): void {
  const template = process.env[PGLITE_TEMPLATE_VARIABLE];
  if (!template || !existsSync(template)) return;
  cpSync(template, path.join(dataDir, 'pglite'), { recursive: true });
}

/** The template database to create a test database from, when one was made on `adminUrl`'s server. */
export function postgresTemplateFor(adminUrl: string): string | undefined {
  const template = process.env[POSTGRES_TEMPLATE_VARIABLE];
  return template && adminUrl === process.env['DATABASE_URL'] ? template : undefined;
}

function fastTempBase(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

/**
 * A vitest globalSetup: makes this run's temporary directory and its migrated template (PGlite directory, or
 * a database on DATABASE_URL's server), and removes both when the run ends.
 */
export default async function migratedTemplate(): Promise<() => Promise<void>> {
  const runDir = mkdtempSync(path.join(fastTempBase(), 'latchkey-test-run-'));
  process.env[TEST_TMP_VARIABLE] = runDir;
  const adminUrl = process.env['DATABASE_URL'];
  if (adminUrl) {
    const name = `latchkey_template_${randomBytes(6).toString('hex')}`;
    const admin = await createDatabase({ url: adminUrl, dataDir: runDir, poolSize: 2, timeoutMs: ADMIN_TIMEOUT_MS });
    try {
      await admin.db.execute(sql.raw(`create database ${name}`));
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      const template = await createDatabase({ url: url.toString(), dataDir: runDir, poolSize: 2 });
      try {
        await runMigrations(template);
      } finally {
        await template.close();
      }
    } finally {
      await admin.close();
    }
    process.env[POSTGRES_TEMPLATE_VARIABLE] = name;
    return async () => {
      const again = await createDatabase({ url: adminUrl, dataDir: runDir, poolSize: 2, timeoutMs: ADMIN_TIMEOUT_MS });
      try {
        await again.db.execute(sql.raw(`drop database if exists ${name} with (force)`));
      } finally {
        await again.close();
        rmSync(runDir, { recursive: true, force: true });
      }
    };
  }
  const templateDir = path.join(runDir, 'template');
  mkdirSync(templateDir);
  const template = await createDatabase({ dataDir: templateDir });
  try {
    await runMigrations(template);
  } finally {
    await template.close();
  }
  process.env[PGLITE_TEMPLATE_VARIABLE] = path.join(templateDir, 'pglite');
  return async () => rmSync(runDir, { recursive: true, force: true });
}
