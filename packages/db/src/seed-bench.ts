import { sql, type SQL } from 'drizzle-orm';
import type { Database, DatabaseHandle } from './client.js';
import { rowsOf } from './rows.js';
import { seedDemoData } from './seed.js';

/**
 * The shape of a benchmark data set. Bench user n belongs to bench organization ((n - 1) % organizations) + 1 and
 * each organization's documents are owned by its 40 members, so `users` is 40 times `organizations`.
 */
export interface BenchDataSize {
  organizations: number;
  users: number;
  /** documents in all, the demo organization's included */
  documents: number;
  /** documents in the demo organization `acme`, so the demo users' pages are full */
  acmeDocuments: number;
  /** bench users who are also members of `acme` (in every role), beside the demo users */
  acmeMembers: number;
}

/** The size of the benchmark data set (docs/performance.md): fixed, so every run measures the same data. */
export const BENCH_DATA: Readonly<BenchDataSize> = {
  organizations: 50,
  users: 2_000,
  /** documents in all, the demo organization's included */
  documents: 100_000,
  /** documents in the demo organization `acme`, so the demo users' pages are full */
  acmeDocuments: 2_400,
  /** bench users who are also members of `acme` (in every role), beside the demo users */
  acmeMembers: 39,
};

export interface BenchSeedCounts {
  organizations: number;
  users: number;
  memberships: number;
  documents: number;
}

export interface BenchSeedResult extends BenchSeedCounts {
  /** the rows this run added (all zero on a second run) */
  added: BenchSeedCounts;
}

const ROLES = `(array['OWNER','ADMIN','EDITOR','VIEWER']::role[])`;
const orgSlug = (n: SQL) => sql`'bench-org-' || lpad((${n})::text, 2, '0')`;
const userEmail = (n: SQL) => sql`'bench-user-' || lpad((${n})::text, 4, '0') || '@bench.test'`;

/** `with added as (insert ... returning 1) select count(*)`: how many rows one idempotent insert added. */
async function countAdded(db: Database, insert: SQL): Promise<number> {
  const [row] = rowsOf<{ added: number }>(
    await db.execute(sql`with added as (${insert} returning 1) select count(*)::int as added from added`),
  );
  return Number(row?.added ?? 0);
}

/**
 * Bulk statements (thousands of rows each): open the database with `BULK_STATEMENT_TIMEOUT_MS` or more, not a
 * request's deadline, or a loaded machine times them out.
 */
export const BULK_STATEMENT_TIMEOUT_MS = 120_000;

/**
 * A realistic data set for `pnpm bench` on top of the demo data: 50 organizations, 2,000 users with
 * memberships in every role, and 100,000 documents in every state with some legal holds, embargoes and
 * internal notes, 2,400 of them in `acme` (owned by alice, erin and 39 bench members of acme). Every row is
 * derived from its number, in set-based statements; idempotent (conflicts on the natural keys are skipped), so a
 * second run adds nothing. Ends with `ANALYZE`, so the planner knows the data as `pnpm bench` then reads it.
 * `size` is `BENCH_DATA` unless a test asks for the same shape smaller. Answers the rows each table holds
 * afterwards and the rows this run added.
 */
export async function seedBenchData(handle: DatabaseHandle, size: Readonly<BenchDataSize> = BENCH_DATA): Promise<BenchSeedResult> {
  const { organizations: orgCount, users: userCount, documents: total, acmeDocuments, acmeMembers } = size;
  if (userCount !== 40 * orgCount) throw new RangeError('a bench data set has 40 users per organization');
  await seedDemoData(handle);
  const result = await handle.db.transaction(async (tx) => {
    const organizations = await countAdded(
      tx,
      sql`insert into organizations (slug, name, plan, billing_email)
          select ${orgSlug(sql`n`)}, 'Bench organization ' || n, (case when n % 2 = 0 then 'PRO' else 'FREE' end)::plan,
                 'billing@bench-org-' || n || '.test'
          from generate_series(1, ${orgCount}) n
          on conflict do nothing`,
    );
    // Every 7th address unverified, every 97th account suspended: the rules that read them have work to do.
    const users = await countAdded(
      tx,
      sql`insert into users (email, display_name, email_verified, suspended)
          select ${userEmail(sql`n`)}, 'Bench user ' || n, n % 7 <> 0, n % 97 = 0
          from generate_series(1, ${userCount}) n
          on conflict do nothing`,
    );
    // User n belongs to organization ((n - 1) % 50) + 1 in role n % 4; the first 39 also belong to acme.
    const memberships = await countAdded(
      tx,
      sql`insert into memberships (organization_id, user_id, role)
          select o.id, u.id, ${sql.raw(ROLES)}[(m.n % 4) + 1]
          from (select n, ${orgSlug(sql`(n - 1) % ${orgCount} + 1`)} as slug from generate_series(1, ${userCount}) n
                union all
                select n, 'acme' from generate_series(1, ${acmeMembers}) n) m
          join organizations o on o.slug = m.slug
          join users u on u.email = ${userEmail(sql`m.n`)}
          on conflict do nothing`,
    );
    // Document n: in acme for n <= 2,400 (owner: alice when n % 40 = 0, else bench member n % 40), otherwise in
    // bench organization ((n - 1) % 50) + 1, owned by one of its 40 members. One in 50 under legal hold, one in 40
    // embargoed, one in 10 with internal notes; created a minute apart, so pages have a stable order.
    const documents = await countAdded(
      tx,
      sql`insert into documents (organization_id, owner_id, title, body, status, legal_hold, embargo_until, internal_notes, created_at, updated_at)
          select o.id, u.id, 'Bench document ' || lpad(d.n::text, 6, '0'),
                 'Benchmark body of document ' || d.n || '. ' || repeat('Lorem ipsum dolor sit amet. ', 6),
                 (array['DRAFT','PUBLISHED','PUBLISHED','ARCHIVED']::document_status[])[(d.n % 4) + 1],
                 d.n % 50 = 0,
                 case when d.n % 40 = 7 then timestamptz '2099-01-01T00:00:00Z' end,
                 case when d.n % 10 = 3 then 'Internal note ' || d.n end,
                 timestamptz '2026-01-01T00:00:00Z' + make_interval(mins => d.n),
                 timestamptz '2026-01-01T00:00:00Z' + make_interval(mins => d.n)
          from (select n,
                       case when n <= ${acmeDocuments} then 'acme' else ${orgSlug(sql`(n - 1) % ${orgCount} + 1`)} end as slug,
                       case when n <= ${acmeDocuments} then
                              case when n % 40 = 0 then 'alice@acme.test' else ${userEmail(sql`n % 40`)} end
                            else ${userEmail(sql`((n - 1) % ${orgCount} + 1) + ${orgCount} * (n % 40)`)} end as owner
                from generate_series(1, ${total - 7}) n) d
          join organizations o on o.slug = d.slug
          join users u on u.email = d.owner
          on conflict do nothing`,
    );
    const [after] = rowsOf<BenchSeedCounts>(
      await tx.execute(sql`select (select count(*)::int from organizations) as organizations, (select count(*)::int from users) as users,
          (select count(*)::int from memberships) as memberships, (select count(*)::int from documents) as documents`),
    );
    return { ...after!, added: { organizations, users, memberships, documents } };
  });
  // Planner statistics for the rows just written: without them (autovacuum may be off, as on a developer's server,
  // or not have run yet) a page's plan is chosen blind, and what the bench measures depends on when it last ran.
  await handle.db.execute(sql`analyze`);
  return result;
}
