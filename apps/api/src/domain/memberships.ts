import { memberships, organizations, type Database, type OrganizationRow, type Role } from '@latchkey/db';
import { asc, eq } from 'drizzle-orm';

export interface MembershipWithOrganization {
  role: Role;
  organization: OrganizationRow;
}

/** A user's memberships with their organizations, in one statement. */
export async function membershipsOf(db: Database, userId: string): Promise<MembershipWithOrganization[]> {
  return db
    .select({ role: memberships.role, organization: organizations })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(eq(memberships.userId, userId))
    .orderBy(asc(organizations.slug));
}
