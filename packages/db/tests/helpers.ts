import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';

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

/** A fresh empty database per call: own PostgreSQL database, or own PGlite temp dir. */
export async function createTestTarget(): Promise<TestTarget> {
  const dataDir = mkdtempSync(join(tmpdir(), 'latchkey-db-test-'));
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (!serverUrl) return { url: undefined, dataDir, cleanup: async () => removeDir() };

  const name = `latchkey_db_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
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
