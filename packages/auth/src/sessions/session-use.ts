import { recordSessionSignIn, recordSessionUse, type Database } from '@latchkey/db';
import { userAgentOf } from '@latchkey/http';
import type { IncomingMessage } from 'node:http';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

/** A completed sign-in step in this browser's session: where and with what it was made. */
export function recordSignInStep(
  db: Database,
  req: IncomingMessage,
  step: { sessionUid: string; userId: string; address: string | null },
): Promise<void> {
  return recordSessionSignIn(db, { ...step, userAgent: userAgentOf(req) });
}

/**
 * Keeps each session's last use and client up to date from the provider's own events: an authorization request
 * answered from the session, and a code or refresh token exchanged for tokens. Recording never fails the
 * provider's request: an error is only reported.
 */
export function watchSessionUse(provider: Provider, db: Database, onError: (error: unknown) => void): void {
  const record = (sessionUid: unknown, clientId: unknown) => {
    if (typeof sessionUid !== 'string' || typeof clientId !== 'string') return;
    recordSessionUse(db, sessionUid, clientId).catch(onError);
  };
  provider.on('authorization.success', (ctx: KoaContextWithOIDC) => record(ctx.oidc.session?.uid, ctx.oidc.client?.clientId));
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    const { RefreshToken, AuthorizationCode } = ctx.oidc.entities;
    record((RefreshToken ?? AuthorizationCode)?.sessionUid, ctx.oidc.client?.clientId);
  });
}
