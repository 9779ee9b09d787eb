import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { postgresTemplateFor, seedPgliteDataDir, testTempDir } from '../src/testing/template.js';

export const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

/** Set -> tests run against this PostgreSQL server; unset -> embedded PGlite. */
export const serverUrl = process.env.DATABASE_URL || undefined;

/** Number of migrations drizzle-kit generated, from the committed journal. */
export function journalEntryCount(): number {
  const journal = JSON.parse(readFileSync(join(PACKAGE_DIR, 'drizzle/meta/_journal.json'), 'utf8')) as {
    entries: unknown[];
  };
  return journal.entries.length;
}

export interface TestTarget {
  /** URL of a fresh, empty database (PostgreSQL mode) or undefined (PGlite). */
  url: string | undefined;
  dataDir: string;
  cleanup(): Promise<void>;
}

/**
 * A fresh database per call: own PostgreSQL database, or own PGlite directory. Empty, or with `migrated` a copy of
 * the run's migrated template (booting and migrating an empty PGlite costs seconds; a test of something else need
 * not pay them).
 */
export async function createTestTarget({ migrated = false } = {}): Promise<TestTarget> {
  const dataDir = testTempDir('db-test');
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (!serverUrl) {
    if (migrated) seedPgliteDataDir(dataDir);
    return { url: undefined, dataDir, cleanup: async () => removeDir() };
  }

  const name = `latchkey_db_test_${randomBytes(6).toString('hex')}`;
  const template = migrated ? postgresTemplateFor(serverUrl) : undefined;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(template ? `create database ${name} template ${template}` : `create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dataDir,
    async cleanup() {
      removeDir();
      const dropper = postgres(serverUrl, { max: 1, onnotice: () => {} });
      try {
        // FORCE (PostgreSQL 13+) ends sessions a failed test may have leaked.
        await dropper.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/**
 * Child-process tests import ../dist. `turbo run test` builds first; this also covers a
 * bare `pnpm test` by rebuilding when dist is missing or older than any source file.
 */
export function ensureBuilt(): void {
  const entry = join(PACKAGE_DIR, 'dist/index.js');
  const srcDir = join(PACKAGE_DIR, 'src');
  const builtAt = existsSync(entry) ? statSync(entry).mtimeMs : 0;
  const stale = readdirSync(srcDir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .some((f) => statSync(join(srcDir, f)).mtimeMs > builtAt);
  if (!stale) return;
  const tsc = join(PACKAGE_DIR, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: PACKAGE_DIR, stdio: 'inherit' });
}
