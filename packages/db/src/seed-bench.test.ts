import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestTarget, serverUrl } from '../tests/helpers.js';
import { createDatabase, type DatabaseHandle } from './client.js';
import { runMigrations } from './migrate.js';
import { rowsOf } from './rows.js';
import { BENCH_DATA, BULK_STATEMENT_TIMEOUT_MS, type BenchDataSize, seedBenchData } from './seed-bench.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function count(handle: DatabaseHandle, query: ReturnType<typeof sql>): Promise<number> {
  const [row] = rowsOf<{ n: number }>(await handle.db.execute(query));
  return Number(row?.n);
}

/**
 * The benchmark's data set in its shape, a twentieth of its size: the same statements as `pnpm latchkey seed --bench`
 * (which `pnpm bench` runs at full size, BENCH_DATA), without writing 100,000 rows in every test run.
 */
const SMALL: BenchDataSize = { organizations: 5, users: 200, documents: 5_000, acmeDocuments: 400, acmeMembers: 39 };

describe(`benchmark data (pnpm latchkey seed --bench) (${serverUrl ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('the full set is 50 organizations, 2,000 users and 100,000 documents; a set of another size keeps 40 users per organization', async () => {
    expect(BENCH_DATA).toMatchObject({ organizations: 50, users: 2_000, documents: 100_000 });
    const database = { db: {} } as DatabaseHandle;
    await expect(seedBenchData(database, { ...SMALL, users: 100 })).rejects.toThrow(RangeError);
  });

  it('adds the organizations, users in every role and documents in every state, once', async () => {
    const target = await createTestTarget({ migrated: true });
    cleanups.push(() => target.cleanup());
    const database = await createDatabase({ url: target.url, dataDir: target.dataDir, timeoutMs: BULK_STATEMENT_TIMEOUT_MS });
    cleanups.push(() => database.close());
    await runMigrations(database);

    const added = {
      organizations: SMALL.organizations,
      users: SMALL.users,
      memberships: SMALL.users + SMALL.acmeMembers,
      documents: SMALL.documents - 7, // the demo data brings the other 7
    };
    // The demo data: 2 organizations, 5 users, 4 memberships, 7 documents.
    const total = {
      organizations: added.organizations + 2,
      users: added.users + 5,
      memberships: added.memberships + 4,
      documents: SMALL.documents,
    };
    expect(await seedBenchData(database, SMALL)).toEqual({ ...total, added });
    expect(await count(database, sql`select count(*)::int as n from documents`)).toBe(SMALL.documents);
    // Analyzed: the planner has statistics for the seeded tables (only ANALYZE writes pg_stats here).
    expect(await count(database, sql`select count(*)::int as n from pg_stats where tablename = 'documents'`)).toBeGreaterThan(0);
    expect(
      await count(
        database,
        sql`select count(*)::int as n from documents d join organizations o on o.id = d.organization_id where o.slug = 'acme'`,
      ),
    ).toBeGreaterThanOrEqual(SMALL.acmeDocuments);
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

    expect(await seedBenchData(database, SMALL)).toEqual({ ...total, added: { organizations: 0, users: 0, memberships: 0, documents: 0 } });
  });
});
