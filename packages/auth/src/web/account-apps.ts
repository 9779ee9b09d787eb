import type { IncomingMessage, ServerResponse } from 'node:http';
import { seeOther, type Route } from '@latchkey/http';
import type Provider from 'oidc-provider';
import { listAppsOf, type ConnectedAppView, type RevokeApp } from '../sessions/index.js';
import { scopeWords } from './consent.js';
import type { LoginContext } from './context.js';
import { sameOriginForm } from './form.js';
import { escapeHtml, when } from './html.js';

/** What the Connected apps section needs from the account page. */
export interface AccountAppsDeps {
  signedIn: (req: IncomingMessage, res: ServerResponse) => Promise<{ userId: string } | null>;
  problem: (res: ServerResponse, status: number, message: string) => void;
  revokeApp: RevokeApp;
  provider: Provider;
}

const REVOKED_HERE = { reason: 'revoked by its user on the account page' };

function appItem(app: ConnectedAppView, name: string): string {
  const scopes = app.scopes.map((scope) => `<li data-scope="${escapeHtml(scope)}">${escapeHtml(scopeWords(scope))}</li>`).join('');
  return `<li data-app="${escapeHtml(app.clientId)}"><strong>${escapeHtml(name)}</strong> <small>(${escapeHtml(app.clientId)}): allowed ${when(app.grantedAt)}, last used ${when(app.lastUsedAt)}</small>
<ul>${scopes}</ul>
<form method="post" action="/account/apps/revoke"><input type="hidden" name="client" value="${escapeHtml(app.clientId)}"><button type="submit">Revoke</button></form></li>`;
}

/**
 * The account page's Connected apps: every third-party app this account allowed, what it may do, when it was
 * allowed and last used, and a Revoke button (its grant and refresh tokens end at once; its access tokens are
 * refused on every instance within seconds).
 */
export function createAccountApps({ origin, dbOf, inProvider }: LoginContext, deps: AccountAppsDeps) {
  async function section(req: IncomingMessage, account: { userId: string }): Promise<string> {
    const apps = await listAppsOf(dbOf(req), account.userId);
    const items: string[] = [];
    for (const app of apps) {
      const client = await inProvider(req, () => deps.provider.Client.find(app.clientId));
      const name = client?.metadata()['client_name'];
      items.push(appItem(app, typeof name === 'string' && name ? name : app.clientId));
    }
    return `<h2>Connected apps</h2>
${items.length > 0 ? `<ul id="connected-apps">${items.join('\n')}</ul>` : '<p id="connected-apps">No app has access to your account.</p>'}`;
  }

  async function revokeForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const fields = await sameOriginForm(req, res, origin, (_req, refused, status, message) => deps.problem(refused, status, message));
    if (!fields) return;
    const account = await deps.signedIn(req, res);
    if (!account) return deps.problem(res, 401, 'You are not signed in. Sign in and try again.');
    const clientId = fields['client'] ?? '';
    if (clientId === '' || clientId.length > 100) return deps.problem(res, 400, 'client must be an app of yours.');
    const revoked = await deps.revokeApp(dbOf(req), account.userId, clientId, { ...REVOKED_HERE, actor: account.userId, request: req });
    if (!revoked) return deps.problem(res, 404, 'You have no connected app with this id.');
    seeOther(res, '/account?done=app-revoked');
  }

  const routes: Route[] = [{ path: '/account/apps/revoke', methods: ['POST'], handler: revokeForm }];
  return { section, routes };
}
