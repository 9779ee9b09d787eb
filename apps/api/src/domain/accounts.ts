import { findUserById, type Database, type UserRow } from '@latchkey/db';
import { authorize } from '@latchkey/policy';
import { AccountPolicy } from './policies.js';
import type { Subject } from './subject.js';
import { accountReadWith } from './subject.js';
import { isUuid } from './validate.js';

/**
 * The caller's own account (`Query.me`, `Viewer.user`): null when the token's subject is no account (a client's
 * own token) or the account is gone. A suspended account is refused whatever its token says (AccountPolicy.view).
 * The caller's attributes (`subject`, memoized per request) are read with the account's row in one statement, so
 * the account is taken from that read; only a subject that came without one (or another user's id) reads it again.
 */
export async function getOwnAccount(
  db: Database,
  userId: string | null | undefined,
  subject: () => Promise<Subject | null>,
  handler: string,
): Promise<UserRow | null> {
  if (!userId || !isUuid(userId)) return null;
  const caller = await subject();
  const user = (caller?.id === userId ? accountReadWith(caller) : undefined) ?? (await findUserById(db, userId));
  if (!user) return null;
  authorize(caller, AccountPolicy.view, [user], { handler });
  return user;
}
