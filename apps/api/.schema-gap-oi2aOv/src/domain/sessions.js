import { isSessionId, listSessions } from '@latchkey/auth';
import { findUserById } from '@latchkey/db';
import { authorizeIn, authorizeOrHide } from './access.js';
import { InvalidInputError, NotFoundError } from './errors.js';
import { membershipsOf } from './memberships.js';
import { AccountPolicy } from './policies.js';
import { requireId } from './validate.js';
/** The caller's own account (AccountPolicy.view: itself, never suspended). */
function ownAccount(request) {
    const id = request.subject?.id ?? '';
    authorizeIn(request, AccountPolicy.view, [{ id }]);
    return id;
}
/** The caller's sessions, most recently used first; `current` marks the one behind the caller's token. */
export function listOwnSessions(request, currentSessionId) {
    return listSessions(request.db, ownAccount(request), currentSessionId);
}
/** Ends one of the caller's sessions; another account's session or an unknown id answers NOT_FOUND. */
export async function endOwnSession(request, sessions, id) {
    if (!isSessionId(id))
        throw new InvalidInputError('id must be a session id.', ['id']);
    const { count } = await sessions.end(request.db, ownAccount(request), { only: id });
    if (count === 0)
        throw new NotFoundError();
    return true;
}
/** Ends every session of the caller but the one behind the caller's token (all of them for a token without one). */
export async function endOtherOwnSessions(request, sessions, currentSessionId) {
    const { count } = await sessions.end(request.db, ownAccount(request), { allBut: currentSessionId });
    return count;
}
/**
 * Ends every session of a user (AccountPolicy.endSessions: themself, an ADMIN or above of one of their
 * organizations, the super-admin). A user of another tenant answers NOT_FOUND, like a missing one.
 */
export async function endUserSessions(request, sessions, userIdInput) {
    const userId = requireId(userIdInput, ['userId'], 'a user id');
    const user = await findUserById(request.db, userId);
    if (!user)
        throw new NotFoundError();
    const memberships = await membershipsOf(request.db, userId);
    authorizeOrHide(request, AccountPolicy.viewMember, [user, memberships.map((member) => member.organization.id)]);
    const roles = memberships.map((member) => ({ organizationId: member.organization.id, role: member.role }));
    authorizeIn(request, AccountPolicy.endSessions, [user, roles]);
    const { count } = await sessions.end(request.db, userId, { allBut: null });
    return count;
}
//# sourceMappingURL=sessions.js.map