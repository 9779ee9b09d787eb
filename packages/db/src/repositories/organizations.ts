import { eq, inArray } from 'drizzle-orm';
import type { Database } from '../client.js';
import { organizations, type OrganizationRow } from '../schema/index.js';

/** One organization by its slug (the caller checks the slug's form). */
export async function findOrganizationBySlug(db: Database, slug: string): Promise<OrganizationRow | null> {
  const [organization] = await db.select().from(organizations).where(eq(organizations.slug, slug)).limit(1);
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
  return db
    .select()
    .from(organizations)
    .where(inArray(organizations.id, [...ids]));
}
