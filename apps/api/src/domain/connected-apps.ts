import { listAppsOf, type ConnectedAppView, type RevokeApp } from '@latchkey/auth';
import { InvalidInputError, NotFoundError } from './errors.js';
import { authorizeIn, type DomainRequest } from './request.js';
import { AccountPolicy } from './policies.js';

/** A connected app as the API shows it: the list's view, with the app's registered name. */
export interface ConnectedAppEntry extends ConnectedAppView {
  name: string;
}

/** What the connected-apps services need: revoking one, and the registered name of a client. */
export interface ConnectedAppServices {
  revoke: RevokeApp;
  /** the registered `client_name`, or the client id */
  nameOf(clientId: string): string;
}

/** The caller's own account (AccountPolicy.view: itself, never suspended). */
function ownAccount(request: DomainRequest): string {
  const id = request.subject?.id ?? '';
  authorizeIn(request, AccountPolicy.view, [{ id }]);
  return id;
}

/** The caller's connected apps, most recently used first. */
export async function listOwnConnectedApps(request: DomainRequest, apps: ConnectedAppServices): Promise<ConnectedAppEntry[]> {
  const views = await listAppsOf(request.db, ownAccount(request));
  return views.map((view) => ({ ...view, name: apps.nameOf(view.clientId) }));
}

/** Revokes one of the caller's connected apps (recorded as `app.revoked`); an app not connected answers NOT_FOUND. */
export async function revokeOwnConnectedApp(request: DomainRequest, apps: ConnectedAppServices, clientId: string): Promise<boolean> {
  if (clientId === '' || clientId.length > 100) throw new InvalidInputError('clientId must be a client id.', ['clientId']);
  const own = ownAccount(request);
  const cause = { reason: 'revoked by its user', actor: request.subject?.id ?? null, requestId: request.requestId };
  if (!(await apps.revoke(request.db, own, clientId, cause))) throw new NotFoundError();
  return true;
}
