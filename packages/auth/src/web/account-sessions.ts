import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SessionSelection } from '@latchkey/db';
import { seeOther, type Route } from '@latchkey/http';
import { isSessionId, listSessions, type EndSessions, type SessionView } from '../sessions/index.js';
import type { LoginContext } from './context.js';
import { sameOriginForm } from './form.js';
import { escapeHtml, when } from './html.js';

/** What the sessions section needs from the account page: who is signed in here, and how it answers a problem. */
export interface AccountSessionsDeps {
  signedIn: (req: IncomingMessage, res: ServerResponse) => Promise<{ userId: string; sessionUid: string } | null>;
  problem: (res: ServerResponse, status: number, message: string) => void;
  endSessions: EndSessions;
}

const ENDED_HERE = { reason: 'ended by its user on the account page' };

function sessionItem(session: SessionView, current: boolean): string {
  const where = [session.userAgent ?? 'An unknown browser', session.address ? `from ${session.address}` : ''].filter(Boolean).join(' ');
  const through = session.client ? `, used through ${session.client}` : '';
  const end = current
    ? ' <small>(this browser: <a href="/oidc/session/end">sign out</a>)</small>'
    : `<form method="post" action="/account/sessions/end"><input type="hidden" name="id" value="${escapeHtml(session.id)}"><button type="submit">End this session</button></form>`;
  return `<li data-session="${escapeHtml(session.id)}"><strong>${escapeHtml(where)}</strong> <small>signed in ${when(session.createdAt)}, last used ${when(session.lastUsedAt)}${escapeHtml(through)}</small>${end}</li>`;
}

/**
 * The account page's sessions: every browser signed in to this account, with a way to end any other one (its
 * tokens are refused within seconds, its grants revoked) or all of them at once. This browser signs out instead.
 */
export function createAccountSessions({ origin, dbOf, inProvider }: LoginContext, deps: AccountSessionsDeps) {
  async function section(req: IncomingMessage, account: { userId: string; sessionUid: string }): Promise<string> {
    const sessions = await listSessions(dbOf(req), account.userId, account.sessionUid);
    const others = sessions.filter((session) => session.id !== account.sessionUid).length;
    return `<h2>Sessions</h2>
<ul id="sessions">${sessions.map((session) => sessionItem(session, session.id === account.sessionUid)).join('\n')}</ul>
${others > 0 ? '<form method="post" action="/account/sessions/end"><input type="hidden" name="which" value="others"><button type="submit">End every other session</button></form>' : ''}`;
  }

  async function endSessionForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const fields = await sameOriginForm(req, res, origin, (_req, refused, status, message) => deps.problem(refused, status, message));
    if (!fields) return;
    const account = await deps.signedIn(req, res);
    if (!account) return deps.problem(res, 401, 'You are not signed in. Sign in and try again.');
    const cause = { ...ENDED_HERE, actor: account.userId, request: req };
    // The back-channel logouts look the clients up through the provider.
    const end = (selection: SessionSelection) => inProvider(req, () => deps.endSessions(dbOf(req), account.userId, selection, cause));
    if (fields['which'] === 'others') {
      await end({ allBut: account.sessionUid });
      return seeOther(res, '/account?done=sessions-ended');
    }
    const id = fields['id'] ?? '';
    if (!isSessionId(id)) return deps.problem(res, 400, 'id must be a session id.');
    if (id === account.sessionUid) return deps.problem(res, 400, 'This is the session of this browser: sign out instead.');
    const { count } = await end({ only: id });
    if (count === 0) return deps.problem(res, 404, 'You have no session with this id.');
    seeOther(res, '/account?done=session-ended');
  }

  const routes: Route[] = [{ path: '/account/sessions/end', methods: ['POST'], handler: endSessionForm }];
  return { section, routes };
}
