import { and, desc, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { connectedApps, endedSessions, oidcModels, type ConnectedAppRow } from '../schema/index.js';

/**
 * The key under which a revoked app is listed beside the ended sessions (`ended_sessions.session_uid`): a session
 * uid never holds a colon, and a user id is a uuid, so the two never meet.
 */
export const revokedAppKey = (userId: string, clientId: string) => `app:${userId}:${clientId}`;

/** The user and client of a revoked-app key; undefined for a session uid. */
export function parseRevokedAppKey(key: string): { userId: string; clientId: string } | undefined {
  if (!key.startsWith('app:')) return undefined;
  const rest = key.slice(4);
  const colon = rest.indexOf(':');
  if (colon < 0) return undefined;
  return { userId: rest.slice(0, colon), clientId: rest.slice(colon + 1) };
}

/** The grant remembered for a user and client (any session of the user finds it), if any. */
export async function findConnectedAppGrant(db: Database, userId: string, clientId: string): Promise<string | undefined> {
  const [row] = await db
    .select({ grantId: connectedApps.grantId })
    .from(connectedApps)
    .where(and(eq(connectedApps.userId, userId), eq(connectedApps.clientId, clientId)));
  return row?.grantId;
}

/** A consent given: the app's row names its grant and every scope allowed so far. */
export async function recordConnectedApp(
  db: Database,
  record: { userId: string; clientId: string; grantId: string; scope: string },
): Promise<void> {
  const now = new Date();
  await db
    .insert(connectedApps)
    .values({ ...record, grantedAt: now, lastUsedAt: now })
    .onConflictDoUpdate({
      target: [connectedApps.userId, connectedApps.clientId],
      set: { grantId: record.grantId, scope: record.scope, lastUsedAt: now },
    });
}

/** A token issued under a grant (a code exchanged, a refresh): its app's last use. */
export async function recordConnectedAppUse(db: Database, grantId: string): Promise<void> {
  await db.update(connectedApps).set({ lastUsedAt: new Date() }).where(eq(connectedApps.grantId, grantId));
}

/**
 * A user's connected apps whose grant is still alive, most recently used first. A grant also ends with the session it
 * was made in (ended, or signed out of) and with its lifetime: its app is then no longer connected.
 */
export async function listConnectedApps(db: Database, userId: string, now = new Date()): Promise<ConnectedAppRow[]> {
  const rows = await db
    .select({ app: connectedApps })
    .from(connectedApps)
    .innerJoin(
      oidcModels,
      and(
        eq(oidcModels.model, 'Grant'),
        eq(oidcModels.id, connectedApps.grantId),
        or(isNull(oidcModels.expiresAt), gt(oidcModels.expiresAt, now)),
      ),
    )
    .where(eq(connectedApps.userId, userId))
    .orderBy(desc(connectedApps.lastUsedAt));
  return rows.map((row) => row.app);
}

/**
 * Revokes a user's app in one transaction: its row, its grants (the remembered one and any other grant of this
 * user to this client) with every token of theirs (refresh tokens, codes), and lists the user and client as revoked
 * at `revokedAt` until `listedUntil` so instances refuse access tokens issued to the app before then. Answers
 * whether the app was connected.
 */
export async function revokeConnectedApp(
  db: Database,
  userId: string,
  clientId: string,
  revokedAt: Date,
  listedUntil: Date,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const removed = await tx
      .delete(connectedApps)
      .where(and(eq(connectedApps.userId, userId), eq(connectedApps.clientId, clientId)))
      .returning({ grantId: connectedApps.grantId });
    const grants = await tx
      .select({ id: oidcModels.id })
      .from(oidcModels)
      .where(
        and(
          eq(oidcModels.model, 'Grant'),
          sql`${oidcModels.payload} ->> 'accountId' = ${userId}`,
          sql`${oidcModels.payload} ->> 'clientId' = ${clientId}`,
        ),
      );
    const grantIds = [...new Set([...removed.map((row) => row.grantId), ...grants.map((row) => row.id)])];
    if (grantIds.length > 0) {
      await tx
        .delete(oidcModels)
        .where(or(inArray(oidcModels.grantId, grantIds), and(eq(oidcModels.model, 'Grant'), inArray(oidcModels.id, grantIds))));
    }
    if (removed.length === 0 && grantIds.length === 0) return false;
    const key = revokedAppKey(userId, clientId);
    await tx
      .insert(endedSessions)
      .values({ sessionUid: key, endedAt: revokedAt, expiresAt: listedUntil })
      .onConflictDoUpdate({ target: endedSessions.sessionUid, set: { endedAt: revokedAt, expiresAt: listedUntil } });
    return true;
  });
}
