import { onPostgres } from './testing/index.js';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { sql, type SQL } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestTarget, ensureBuilt, journalEntryCount, PACKAGE_DIR, serverUrl, type TestTarget } from '../tests/helpers.js';
import { createDatabase, type DatabaseHandle } from './client.js';
import { runMigrations } from './migrate.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function open(target: TestTarget): Promise<DatabaseHandle> {
  const handle = await createDatabase({ url: target.url, dataDir: target.dataDir });
  cleanups.push(() => handle.close());
  return handle;
}

async function freshTarget(): Promise<TestTarget> {
  const target = await createTestTarget();
  cleanups.unshift(() => target.cleanup()); // runs after the handles are closed
  return target;
}

/**
 * Raw-SQL rows for either driver: the shared Database type leaves execute()'s result
 * driver-specific (postgres-js returns the row array, PGlite a `{ rows }` object).
 */
async function rows<T>(handle: DatabaseHandle, query: SQL): Promise<T[]> {
  const result: unknown = await handle.db.execute(query);
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

async function appliedMigrations(handle: DatabaseHandle): Promise<number> {
  const [row] = await rows<{ n: number }>(handle, sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
  return Number(row?.n);
}

describe(`runMigrations (${serverUrl ? 'PostgreSQL' : 'PGlite'})`, () => {
  it("creates the schema's tables and is idempotent", async () => {
    const handle = await open(await freshTarget());
    await runMigrations(handle);
    await runMigrations(handle);

    const columns = await rows<{ column_name: string }>(
      handle,
      sql`select column_name from information_schema.columns where table_schema = 'public' and table_name = 'users' order by ordinal_position`,
    );
    expect(columns.map((c) => c.column_name)).toEqual([
      'id',
      'email',
      'display_name',
      'created_at',
      'updated_at',
      'email_verified',
      'suspended',
      'super_admin',
    ]);
    const tables = await rows<{ table_name: string }>(
      handle,
      sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      'api_budgets',
      'audit_anchors',
      'audit_events',
      'connected_apps',
      'deprecated_uses',
      'document_events',
      'document_events_purged',
      'documents',
      'dpop_proof_uses',
      'ended_sessions',
      'federated_identities',
      'memberships',
      'oidc_models',
      'one_time_tokens',
      'organizations',
      'passkeys',
      'password_credentials',
      'persisted_app_documents',
      'persisted_app_versions',
      'persisted_operations',
      'provider_session_factors',
      'recovery_codes',
      'remembered_devices',
      'session_activity',
      'sign_in_progress',
      'totp_credentials',
      'users',
      'webauthn_challenges',
    ]);
    expect(await appliedMigrations(handle)).toBe(journalEntryCount());
  });

  it('keeps data and the journal across reopening the same database', async () => {
    const target = await freshTarget();
    const first = await open(target);
    await runMigrations(first);
    await first.db.execute(sql`insert into users (email) values ('persist@example.com')`);
    await first.close();

    const second = await open(target);
    await runMigrations(second);
    const emails = await rows<{ email: string }>(second, sql`select email from users`);
    expect(emails.map((r) => r.email)).toEqual(['persist@example.com']);
    expect(await appliedMigrations(second)).toBe(journalEntryCount());
  });
});

if (!serverUrl) {
  console.info(
    '[db tests] DATABASE_URL not set: skipping the concurrent-migration test (it needs a PostgreSQL server shared by two processes; PGlite is single-process)',
  );
}

describe.runIf(onPostgres('the PostgreSQL-only tests'))('runMigrations concurrency (PostgreSQL only)', () => {
  beforeAll(() => ensureBuilt());

  it('two processes migrating one fresh database at once both succeed, each migration recorded once', async () => {
    const target = await freshTarget();
    const children = [0, 1].map(() => startChild(target));
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.go(); // release both as close together as possible
    const results = await Promise.all(children.map((c) => c.exit));
    for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0, stdout: 'ready\nmigrated\n' });

    const handle = await open(target);
    expect(await appliedMigrations(handle)).toBe(journalEntryCount());
  });
});

function startChild(target: TestTarget) {
  const child = spawn(process.execPath, [join(PACKAGE_DIR, 'tests/migrate-child.mjs')], {
    cwd: PACKAGE_DIR,
    env: { ...process.env, LATCHKEY_TEST_DB_URL: target.url, LATCHKEY_TEST_DATA_DIR: target.dataDir },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.startsWith('ready\n')) resolve();
    });
    child.once('exit', () => reject(new Error(`child exited before ready: ${stderr}`)));
  });
  ready.catch(() => {}); // surfaced through `exit` as well
  const exit = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return { ready, exit, go: () => child.stdin.end('go\n') };
}
