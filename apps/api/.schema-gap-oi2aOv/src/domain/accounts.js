import { findUserById } from '@latchkey/db';
import { authorize } from '@latchkey/policy';
import { AccountPolicy } from './policies.js';
import { isUuid } from './validate.js';
/**
 * The caller's own account (`Query.me`, `Viewer.user`): null when the token's subject is no account (a client's
 * own token) or the account is gone. A suspended account is refused whatever its token says (AccountPolicy.view).
 * The account is read first; the caller's attributes (`subject`, memoized per request) only when there is one.
 */
export async function getOwnAccount(db, userId, subject, handler) {
    if (!userId || !isUuid(userId))
        return null;
    const user = await findUserById(db, userId);
    if (!user)
        return null;
    authorize(await subject(), AccountPolicy.view, [user], { handler });
    return user;
}
//# sourceMappingURL=accounts.js.map