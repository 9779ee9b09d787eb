import { countOwners, findMemberRole, listMembershipsOfUser, lockOrganizationBySlug, setMemberRole, } from '@latchkey/db';
import { authorizeIn, authorizeOrHide } from './access.js';
import { NotFoundError } from './errors.js';
import { OrganizationPolicy } from './policies.js';
import { requireId, requireSlug } from './validate.js';
import { OWNER_GRANT_STEP_UP, requireStepUp } from '@latchkey/auth/tokens';
/** A user's memberships with their organizations, in one statement. */
export function membershipsOf(db, userId) {
    return listMembershipsOfUser(db, userId);
}
/**
 * Changes a member's role: ADMIN or above, never to or from a role above one's own (OrganizationPolicy.changeRole).
 * Another tenant's organization and a user who is not a member both answer NOT_FOUND; the last OWNER cannot
 * be demoted (a business failure, reported as data). Making someone an OWNER needs a step-up
 * (`OWNER_GRANT_STEP_UP`): `StepUpRequired` otherwise, thrown inside the transaction before anything is written.
 */
export async function changeMemberRole(request, input, at = ['input']) {
    const slug = requireSlug(input.organization, [...at, 'organization']);
    const userId = requireId(input.userId, [...at, 'userId'], 'a user id');
    return request.db.transaction(async (tx) => {
        const organization = await lockOrganizationBySlug(tx, slug);
        if (!organization)
            throw new NotFoundError();
        authorizeOrHide(request, OrganizationPolicy.view, [organization]);
        const member = { organizationId: organization.id, userId };
        const current = await findMemberRole(tx, member);
        if (!current)
            throw new NotFoundError();
        authorizeIn(request, OrganizationPolicy.changeRole, [organization, current, input.role]);
        // Step-up (spec Multi-factor rules 6): granting OWNER hands over the organization for good, so it needs a
        // recent two-factor sign-in. Judged only once the caller is known to be allowed (FORBIDDEN / NOT_FOUND first).
        if (input.role === 'OWNER' && current !== 'OWNER')
            requireStepUp(request.authentication, OWNER_GRANT_STEP_UP);
        if (current === 'OWNER' && input.role !== 'OWNER') {
            // The organization row is locked above, so two demotions cannot both see a second owner.
            if ((await countOwners(tx, organization.id)) <= 1) {
                return {
                    membership: null,
                    userErrors: [{ field: [...at, 'role'], message: 'The organization must keep at least one OWNER.', code: 'LAST_OWNER' }],
                };
            }
        }
        if (current !== input.role)
            await setMemberRole(tx, member, input.role);
        return { membership: { role: input.role, userId, organization }, userErrors: [] };
    });
}
//# sourceMappingURL=memberships.js.map