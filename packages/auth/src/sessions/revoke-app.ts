import { listConnectedApps, revokeConnectedApp, type Database } from '@latchkey/db';
import type { AuditParties, AuditTrail } from '../audit/index.js';
import type { EndedSessions } from './ended-sessions.js';

export interface AppRevocationOptions {
  /** how long the provider's access tokens live, in seconds (its AccessToken TTL) */
  accessTokenTtlSeconds: number;
  /** JWT_CLOCK_SKEW in seconds: a token is accepted this long past its `exp` */
  clockSkewSeconds: number;
  /** this instance's list of ended sessions and revoked apps, told at once (other instances read the table) */
  endedSessions?: EndedSessions;
  /** where each revocation is recorded (`app.revoked`) */
  audit?: AuditTrail;
}

/** Who revoked an app, from which request, and why. */
export interface AppRevocationCause extends AuditParties {
  /** e.g. `revoked by its user on the account page` */
  reason: string;
}

/** A third-party app a person allowed, as the Connected apps list shows it. */
export interface ConnectedAppView {
  clientId: string;
  /** every scope allowed (OpenID's and the API's) */
  scopes: string[];
  grantedAt: Date;
  /** its last consent, sign-in or token (code exchange or refresh) */
  lastUsedAt: Date;
}

/** An account's connected apps, most recently used first. */
export async function listAppsOf(db: Database, userId: string): Promise<ConnectedAppView[]> {
  const rows = await listConnectedApps(db, userId);
  return rows.map((row) => ({
    clientId: row.clientId,
    scopes: row.scope.split(' ').filter(Boolean),
    grantedAt: row.grantedAt,
    lastUsedAt: row.lastUsedAt,
  }));
}

/**
 * Revokes a third-party app of an account (the Connected apps list, or GraphQL): its grant and every token of it
 * go in one transaction (refresh tokens included, so a refresh fails at once); its access tokens, JWTs that carry
 * no grant id, are refused by every instance from the next read of the ended list (every second; the list is the
 * ended sessions', whose entries say "this user, this client, issued at or before this second"), here at once.
 * Recorded as `app.revoked`. Answers whether the app was connected.
 */
export function createAppRevocation(options: AppRevocationOptions) {
  return async function revokeApp(db: Database, userId: string, clientId: string, cause: AppRevocationCause): Promise<boolean> {
    const revokedAt = new Date();
    // The last access token issued before now is refused until it has expired.
    const listedUntil = new Date(revokedAt.getTime() + (options.accessTokenTtlSeconds + options.clockSkewSeconds) * 1000);
    const revoked = await revokeConnectedApp(db, userId, clientId, revokedAt, listedUntil);
    if (!revoked) return false;
    options.endedSessions?.addRevokedApp(userId, clientId, revokedAt, listedUntil);
    const { reason, ...parties } = cause;
    options.audit?.record({ type: 'app.revoked', details: { clientId, reason }, subject: userId, ...parties });
    return true;
  };
}

export type RevokeApp = ReturnType<typeof createAppRevocation>;
