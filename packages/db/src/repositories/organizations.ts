import { eq, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { reusableReadByKeys } from '../prepared.js';
import { rowsOf } from '../rows.js';
import { memberships, organizations, type OrganizationRow, type Plan } from '../schema/index.js';

// Read on the request paths (a dashboard, a loader's batch): built once.
const organizationsBySlugs = reusableReadByKeys<OrganizationRow[]>('organizations_by_slugs', 'text', (db, matches) =>
  db.select().from(organizations).where(matches(organizations.slug)),
);
const organizationsByIds = reusableReadByKeys<OrganizationRow[]>('organizations_by_ids', 'uuid', (db, matches) =>
  db.select().from(organizations).where(matches(organizations.id)),
);

/** One organization by its slug (the caller checks the slug's form). */
export async function findOrganizationBySlug(db: Database, slug: string): Promise<OrganizationRow | null> {
  const [organization] = await organizationsBySlugs(db, [slug]);
  return organization ?? null;
}

/**
 * One organization by its slug, its row locked until the transaction `tx` ends (`for update`): changes to its
 * memberships are then made one at a time.
 */
export async function lockOrganizationBySlug(tx: Database, slug: string): Promise<OrganizationRow | null> {
  const [organization] = await tx.select().from(organizations).where(eq(organizations.slug, slug)).for('update');
  return organization ?? null;
}

/** Organizations by id, in one statement (a batch of a request's loader), in no particular order. */
export async function listOrganizationsByIds(db: Database, ids: readonly string[]): Promise<OrganizationRow[]> {
  return organizationsByIds(db, ids);
}

/** The organizations of these slugs that exist, in one statement (a batch of a request's loader). */
export async function listOrganizationsBySlugs(db: Database, slugs: readonly string[]): Promise<OrganizationRow[]> {
  return organizationsBySlugs(db, slugs);
}

/**
 * The plans of the organizations a user belongs to, one row each (no particular order): what a caller's budget is
 * sized by (the best of them). Read on the request path once per caller and a few seconds: built once.
 */
const plansOfUser = reusableReadByKeys<{ plan: Plan }[]>('plans_of_user', 'uuid', (db, matches) =>
  db
    .selectDistinct({ plan: organizations.plan })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(matches(memberships.userId)),
);

/** The plans of a user's organizations (empty: a member of none). */
export async function listPlansOfUser(db: Database, userId: string): Promise<Plan[]> {
  return (await plansOfUser(db, [userId])).map(({ plan }) => plan);
}

/**
 * Sets the plan of the organization with this slug and answers the plan it had before (null: no such organization),
 * in one statement: the row is locked as it is read, so two changes at once each report the plan the other left.
 * Setting the plan it already has writes the same value (the caller says so from `previous`).
 */
export async function setOrganizationPlan(db: Database, slug: string, plan: Plan): Promise<{ previous: Plan } | null> {
  const [row] = rowsOf<{ previous: Plan }>(
    await db.execute(sql`update ${organizations} set plan = ${plan}
        from (select id, plan from ${organizations} where slug = ${slug} for update) as earlier
        where ${organizations.id} = earlier.id
        returning earlier.plan as previous`),
  );
  return row ?? null;
}
