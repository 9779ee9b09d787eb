import { isSessionId, listSessions, type EndedSessions, type EndSessions, type SessionView } from '@latchkey/auth';
import { findUserById } from '@latchkey/db';
import { authorizeIn, authorizeOrHide, type DomainRequest } from './request.js';
import { InvalidInputError, NotFoundError } from './errors.js';
import { membershipsOf } from './memberships.js';
import { AccountPolicy } from './policies.js';
import { requireId } from './validate.js';

/** The sessions services every entry point shares: the list of ended sessions and the way to end them. */
export interface SessionServices {
  ended: EndedSessions;
  end: EndSessions;
}

/** Who ended sessions, from which request: recorded as `session.ended` (docs/audit.md). */
const endedBy = (request: DomainRequest, reason: string) => ({ reason, actor: request.subject?.id ?? null, requestId: request.requestId });

/** The caller's own account (AccountPolicy.view: itself, never suspended). */
function ownAccount(request: DomainRequest): string {
  const id = request.subject?.id ?? '';
  authorizeIn(request, AccountPolicy.view, [{ id }]);
  return id;
}

/** The caller's sessions, most recently used first; `current` marks the one behind the caller's token. */
export function listOwnSessions(request: DomainRequest, currentSessionId: string | null): Promise<SessionView[]> {
  return listSessions(request.db, ownAccount(request), currentSessionId);
}

/** Ends one of the caller's sessions; another account's session or an unknown id answers NOT_FOUND. */
export async function endOwnSession(request: DomainRequest, sessions: SessionServices, id: string): Promise<boolean> {
  if (!isSessionId(id)) throw new InvalidInputError('id must be a session id.', ['id']);
  const own = ownAccount(request);
  const { count } = await sessions.end(request.db, own, { only: id }, endedBy(request, 'ended by its user'));
  if (count === 0) throw new NotFoundError();
  return true;
}

/** Ends every session of the caller but the one behind the caller's token (all of them for a token without one). */
export async function endOtherOwnSessions(
  request: DomainRequest,
  sessions: SessionServices,
  currentSessionId: string | null,
): Promise<number> {
  const { count } = await sessions.end(
    request.db,
    ownAccount(request),
    { allBut: currentSessionId },
    endedBy(request, 'ended by its user'),
  );
  return count;
}

/**
 * Ends every session of a user (AccountPolicy.endSessions: themself, an ADMIN or above of one of their
 * organizations, the super-admin). A user of another tenant answers NOT_FOUND, like a missing one.
 */
export async function endUserSessions(request: DomainRequest, sessions: SessionServices, userIdInput: string): Promise<number> {
  const userId = requireId(userIdInput, ['userId'], 'a user id');
  const user = await findUserById(request.db, userId);
  if (!user) throw new NotFoundError();
  const memberships = await membershipsOf(request.db, userId);
  authorizeOrHide(request, AccountPolicy.viewMember, [user, memberships.map((member) => member.organization.id)]);
  const roles = memberships.map((member) => ({ organizationId: member.organization.id, role: member.role }));
  authorizeIn(request, AccountPolicy.endSessions, [user, roles]);
  const reason = request.subject?.id === userId ? 'ended by its user' : 'ended by an administrator';
  const { count } = await sessions.end(request.db, userId, { allBut: null }, endedBy(request, reason));
  return count;
}
