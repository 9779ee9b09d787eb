import { eq, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { reusableRead } from '../prepared.js';
import { organizations, type OrganizationRow } from '../schema/index.js';

// Read on the request paths (a dashboard, a loader's batch): built once.
const organizationBySlug = reusableRead<{ slug: string }, OrganizationRow[]>('organization_by_slug', (db) =>
  db
    .select()
    .from(organizations)
    .where(eq(organizations.slug, sql.placeholder('slug')))
    .limit(1),
);
const organizationsByIds = reusableRead<{ ids: readonly string[] }, OrganizationRow[]>('organizations_by_ids', (db) =>
  db
    .select()
    .from(organizations)
    .where(sql`${organizations.id} = any(${sql.placeholder('ids')}::uuid[])`),
);
const organizationsBySlugs = reusableRead<{ slugs: readonly string[] }, OrganizationRow[]>('organizations_by_slugs', (db) =>
  db
    .select()
    .from(organizations)
    .where(sql`${organizations.slug} = any(${sql.placeholder('slugs')}::text[])`),
);

/** One organization by its slug (the caller checks the slug's form). */
export async function findOrganizationBySlug(db: Database, slug: string): Promise<OrganizationRow | null> {
  const [organization] = await organizationBySlug(db, { slug });
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
  return organizationsByIds(db, { ids });
}

/** The organizations of these slugs that exist, in one statement (a batch of a request's loader). */
export async function listOrganizationsBySlugs(db: Database, slugs: readonly string[]): Promise<OrganizationRow[]> {
  return organizationsBySlugs(db, { slugs });
}
