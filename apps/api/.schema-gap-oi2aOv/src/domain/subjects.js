import { findUserWithRoles } from '@latchkey/db';
import { isUuid } from './validate.js';
/** The caller's volatile attributes, read now (spec Authentication 3): null when the subject is no user. */
export async function loadSubject(db, userId) {
    if (!isUuid(userId))
        return null;
    const user = await findUserWithRoles(db, userId);
    if (!user)
        return null;
    const roles = new Map();
    for (const { organizationId, role } of user.roles)
        roles.set(organizationId, role);
    return { id: user.id, superAdmin: user.superAdmin, suspended: user.suspended, emailVerified: user.emailVerified, roles };
}
/**
 * One subject per request however many fields ask (a per-request memo keyed by the request's context), read
 * through the request's own view of the database (its deadline).
 */
export function createSubjectLoader() {
    const byRequest = new WeakMap();
    const load = (request, userId, db) => {
        if (userId === null)
            return Promise.resolve(null);
        let subject = byRequest.get(request);
        if (!subject)
            byRequest.set(request, (subject = loadSubject(db, userId)));
        return subject;
    };
    /** Uses a subject already read (one read shared by the subscribers of an event) for this request key. */
    load.prime = (request, subject) => void byRequest.set(request, subject);
    return load;
}
//# sourceMappingURL=subjects.js.map