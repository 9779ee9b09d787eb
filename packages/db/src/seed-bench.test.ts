import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestTarget, serverUrl } from '../tests/helpers.js';
import { createDatabase, type DatabaseHandle } from './client.js';
import { runMigrations } from './migrate.js';
import { rowsOf } from './rows.js';
import { BENCH_DATA, BULK_STATEMENT_TIMEOUT_MS, seedBenchData } from './seed-bench.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function count(handle: DatabaseHandle, query: ReturnType<typeof sql>): Promise<number> {
  const [row] = rowsOf<{ n: number }>(await handle.db.execute(query));
  return Number(row?.n);
}

describe(`benchmark data (issue 16: pnpm latchkey seed --bench) (${serverUrl ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('adds 50 organizations, 2,000 users in every role and 100,000 documents in every state, once', { timeout: 300_000 }, async () => {
    const target = await createTestTarget();
    cleanups.push(() => target.cleanup());
    const database = await createDatabase({ url: target.url, dataDir: target.dataDir, timeoutMs: BULK_STATEMENT_TIMEOUT_MS });
    cleanups.push(() => database.close());
    await runMigrations(database);

    const added = {
      organizations: BENCH_DATA.organizations,
      users: BENCH_DATA.users,
      memberships: BENCH_DATA.users + BENCH_DATA.acmeMembers,
      documents: BENCH_DATA.documents - 7, // the demo data brings the other 7
    };
    // The demo data: 2 organizations, 5 users, 4 memberships, 7 documents.
    const total = {
      organizations: added.organizations + 2,
      users: added.users + 5,
      memberships: added.memberships + 4,
      documents: 100_000,
    };
    expect(await seedBenchData(database)).toEqual({ ...total, added });
    expect(await count(database, sql`select count(*)::int as n from documents`)).toBe(100_000);
    // Analyzed: the planner has statistics for the seeded tables (only ANALYZE writes pg_stats here).
    expect(await count(database, sql`select count(*)::int as n from pg_stats where tablename = 'documents'`)).toBeGreaterThan(0);
    expect(
      await count(
        database,
        sql`select count(*)::int as n from documents d join organizations o on o.id = d.organization_id where o.slug = 'acme'`,
      ),
    ).toBeGreaterThanOrEqual(2_000);
    expect(await count(database, sql`select count(distinct role)::int as n from memberships`)).toBe(4);
    expect(await count(database, sql`select count(distinct status)::int as n from documents`)).toBe(3);
    expect(await count(database, sql`select count(*)::int as n from documents where legal_hold`)).toBeGreaterThan(0);
    expect(await count(database, sql`select count(*)::int as n from documents where embargo_until > now()`)).toBeGreaterThan(0);
    // Every owner belongs to the document's organization.
    expect(
      await count(
        database,
        sql`select count(*)::int as n from documents d
            left join memberships m on m.organization_id = d.organization_id and m.user_id = d.owner_id where m.user_id is null`,
      ),
    ).toBe(0);

    expect(await seedBenchData(database)).toEqual({ ...total, added: { organizations: 0, users: 0, memberships: 0, documents: 0 } });
  });
});
