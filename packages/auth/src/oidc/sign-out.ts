import type { IncomingMessage } from 'node:http';
import type { KoaContextWithOIDC } from 'oidc-provider';

/** Told when RP-initiated logout has ended a provider session (its user signed out of Latchkey). */
export type OnSignedOut = (session: { uid: string; accountId: string }, request: IncomingMessage) => Promise<void>;

/** After the sign-out confirmation destroyed a session (the user signed out of Latchkey, not only of the client). */
export function reportSignOut(onSignedOut: OnSignedOut) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    await next();
    if (ctx.oidc?.route !== 'end_session_confirm') return;
    const session = ctx.oidc.session as (KoaContextWithOIDC['oidc']['session'] & { destroyed?: boolean }) | undefined;
    if (session?.destroyed && session.uid && session.accountId)
      await onSignedOut({ uid: session.uid, accountId: session.accountId }, ctx.req);
  };
}

/**
 * Whether an access token is issued under a live provider session: its `sid` (the session's stable uid) then lets
 * ending that session refuse the token before it expires. (ID tokens carry the per-client `sid` of OpenID Connect.)
 * A code is exchanged in its session; a refresh token of an `offline_access` grant outlives a sign-out (OpenID
 * Connect 11): what it is refreshed into after that belongs to no session, and names none.
 */
export async function sessionStillOpen(ctx: KoaContextWithOIDC, sessionUid: unknown): Promise<boolean> {
  if (typeof sessionUid !== 'string') return false;
  if (ctx.oidc.entities.AuthorizationCode) return true;
  return (await ctx.oidc.provider.Session.findByUid(sessionUid)) !== undefined;
}
