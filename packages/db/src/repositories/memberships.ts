import { and, asc, count, eq } from 'drizzle-orm';
import type { Database } from '../client.js';
import { reusableReadByKeys } from '../prepared.js';
import { memberships, organizations, type OrganizationRow, type Role } from '../schema/index.js';

export interface MembershipWithOrganizationRow {
  role: Role;
  userId: string;
  organization: OrganizationRow;
}

// Read on the request paths (an account's memberships, the e-mail rule's batch): built once.
const membershipsOfUsers = reusableReadByKeys<MembershipWithOrganizationRow[]>('memberships_of_users', 'uuid', (db, matches) =>
  db
    .select({ role: memberships.role, userId: memberships.userId, organization: organizations })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(matches(memberships.userId))
    .orderBy(asc(organizations.slug)),
);
const organizationIdsOfUsers = reusableReadByKeys<{ userId: string; organizationId: string }[]>(
  'organization_ids_of_users',
  'uuid',
  (db, matches) =>
    db
      .select({ userId: memberships.userId, organizationId: memberships.organizationId })
      .from(memberships)
      .where(matches(memberships.userId)),
);

/** A user's memberships with their organizations, by organization slug, in one statement. */
export async function listMembershipsOfUser(db: Database, userId: string): Promise<MembershipWithOrganizationRow[]> {
  return membershipsOfUsers(db, [userId]);
}

/**
 * The memberships of several users with their organizations, in one statement (a batch of a request's loader), each
 * user's by organization slug; a user without any has none in the answer.
 */
export async function listMembershipsOfUsers(db: Database, userIds: readonly string[]): Promise<MembershipWithOrganizationRow[]> {
  return membershipsOfUsers(db, userIds);
}

/** Every (user, organization) membership of these users, in one statement (a batch of a request's loader). */
export async function listOrganizationIdsOfUsers(
  db: Database,
  userIds: readonly string[],
): Promise<{ userId: string; organizationId: string }[]> {
  return organizationIdsOfUsers(db, userIds);
}

export interface MemberKey {
  organizationId: string;
  userId: string;
}

/** A member's role in an organization; null when the user is not a member. */
export async function findMemberRole(db: Database, { organizationId, userId }: MemberKey): Promise<Role | null> {
  const [member] = await db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
  return member?.role ?? null;
}

/** How many OWNERs an organization has. */
export async function countOwners(db: Database, organizationId: string): Promise<number> {
  const [owners] = await db
    .select({ n: count() })
    .from(memberships)
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.role, 'OWNER')));
  return owners?.n ?? 0;
}

/** Sets a member's role (no row changes when the user is not a member). */
export async function setMemberRole(db: Database, { organizationId, userId }: MemberKey, role: Role): Promise<void> {
  await db
    .update(memberships)
    .set({ role })
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
}
