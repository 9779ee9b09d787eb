import {
  countOwners,
  findMemberRole,
  listMembershipsOfUser,
  lockOrganizationBySlug,
  setMemberRole,
  type Database,
  type OrganizationRow,
  type Role,
} from '@latchkey/db';
import { authorizeIn, authorizeOrHide, type DomainRequest } from './request.js';
import { NotFoundError, type UserError } from './errors.js';
import { OrganizationPolicy } from './policies.js';
import { requireId, requireSlug } from './validate.js';
import { OWNER_GRANT_STEP_UP, requireStepUp } from '@latchkey/auth/tokens';

export interface MembershipWithOrganization {
  role: Role;
  userId: string;
  organization: OrganizationRow;
}

/** A user's memberships with their organizations, in one statement. */
export function membershipsOf(db: Database, userId: string): Promise<MembershipWithOrganization[]> {
  return listMembershipsOfUser(db, userId);
}

export type MembershipResult = { membership: MembershipWithOrganization; userErrors: [] } | { membership: null; userErrors: UserError[] };

/**
 * Changes a member's role: ADMIN or above, never to or from a role above one's own (OrganizationPolicy.changeRole).
 * Another tenant's organization and a user who is not a member both answer NOT_FOUND; the last OWNER cannot
 * be demoted (a business failure, reported as data). Making someone an OWNER needs a step-up
 * (`OWNER_GRANT_STEP_UP`): `StepUpRequired` otherwise, thrown inside the transaction before anything is written.
 */
export async function changeMemberRole(
  request: DomainRequest,
  input: { organization: string; userId: string; role: Role },
  at = ['input'],
): Promise<MembershipResult> {
  const slug = requireSlug(input.organization, [...at, 'organization']);
  const userId = requireId(input.userId, [...at, 'userId'], 'a user id');
  let changed: { organizationId: string; from: Role } | undefined;
  const result = await request.db.transaction(async (tx): Promise<MembershipResult> => {
    const organization = await lockOrganizationBySlug(tx, slug);
    if (!organization) throw new NotFoundError();
    authorizeOrHide(request, OrganizationPolicy.view, [organization]);
    const member = { organizationId: organization.id, userId };
    const current = await findMemberRole(tx, member);
    if (!current) throw new NotFoundError();
    authorizeIn(request, OrganizationPolicy.changeRole, [organization, current, input.role]);
    // Step-up (spec Multi-factor rules 6): granting OWNER hands over the organization for good, so it needs a
    // recent two-factor sign-in. Judged only once the caller is known to be allowed (FORBIDDEN / NOT_FOUND first).
    if (input.role === 'OWNER' && current !== 'OWNER') requireStepUp(request.authentication, OWNER_GRANT_STEP_UP);
    if (current === 'OWNER' && input.role !== 'OWNER') {
      // The organization row is locked above, so two demotions cannot both see a second owner.
      if ((await countOwners(tx, organization.id)) <= 1) {
        return {
          membership: null,
          userErrors: [{ field: [...at, 'role'], message: 'The organization must keep at least one OWNER.', code: 'LAST_OWNER' }],
        };
      }
    }
    if (current !== input.role) {
      await setMemberRole(tx, member, input.role);
      changed = { organizationId: organization.id, from: current };
    }
    return { membership: { role: input.role, userId, organization }, userErrors: [] };
  });
  // Told once committed: a role change that rolled back never happened.
  if (changed) {
    // The request's loader may hold the member's memberships from before (an earlier field of the same operation).
    request.loaders.membershipsOf.forget(userId);
    const details = { organizationId: changed.organizationId, from: changed.from, to: input.role };
    request.audit.record({
      type: 'role.changed',
      details,
      actor: request.subject?.id ?? null,
      subject: userId,
      requestId: request.requestId,
    });
  }
  return result;
}
