import { and, desc, eq, gt, inArray, isNull, lte, notExists, or, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { endedSessions, oidcModels, providerSessionFactors, sessionActivity, type SessionActivityRow } from '../schema/index.js';

/** A provider session of an account as stored (oidc-provider's Session model), with what it was used for. */
export interface StoredSession {
  /** the session's stable uid (never its cookie value, the row's id) */
  uid: string;
  accountId: string;
  amr: string[];
  /** epoch seconds of the last completed sign-in, when there was one */
  loginTs: number | null;
  /** per client: the client's `sid` and the grant made in this session */
  authorizations: Record<string, { sid?: string; grantId?: string }>;
  activity: SessionActivityRow | null;
}

const stringList = (value: unknown) => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);

function storedSession(row: { uid: string | null; payload: Record<string, unknown>; activity: SessionActivityRow | null }): StoredSession {
  const { payload } = row;
  return {
    uid: row.uid ?? '',
    accountId: String(payload['accountId'] ?? ''),
    amr: stringList(payload['amr']),
    loginTs: typeof payload['loginTs'] === 'number' ? payload['loginTs'] : null,
    authorizations: (payload['authorizations'] ?? {}) as StoredSession['authorizations'],
    activity: row.activity,
  };
}

const accountOf = sql`(${oidcModels.payload} ->> 'accountId')`;
const liveSession = (now: Date) => and(eq(oidcModels.model, 'Session'), or(isNull(oidcModels.expiresAt), gt(oidcModels.expiresAt, now)));

/** An account's live provider sessions, most recently used first, in one statement. */
export async function listAccountSessions(db: Database, accountId: string, now = new Date()): Promise<StoredSession[]> {
  const rows = await db
    .select({ uid: oidcModels.uid, payload: oidcModels.payload, activity: sessionActivity })
    .from(oidcModels)
    .leftJoin(sessionActivity, eq(sessionActivity.sessionUid, oidcModels.uid))
    .where(and(liveSession(now), eq(accountOf, accountId)))
    .orderBy(desc(sql`coalesce(${sessionActivity.lastUsedAt}, to_timestamp((${oidcModels.payload} ->> 'loginTs')::double precision))`));
  // A session nobody has signed in to yet (a browser that only started a sign-in) is not a session of the account.
  return rows.map(storedSession).filter((session) => session.uid !== '' && session.loginTs !== null);
}

/** Which of an account's sessions end: one by uid, every one but one, or all. */
export type SessionSelection = { only: string } | { allBut: string | null };

/**
 * Ends sessions of an account in one transaction: the provider sessions go, with every grant made in them and
 * every token of those grants (`offline_access` refresh tokens included), their factors and descriptions; each
 * ended uid is listed until `listedUntil` so instances refuse the access tokens still carrying it. Answers the
 * sessions it ended (a session another request ended first is not counted twice).
 */
export async function endAccountSessions(
  db: Database,
  accountId: string,
  selection: SessionSelection,
  listedUntil: Date,
): Promise<StoredSession[]> {
  return db.transaction(async (tx) => {
    const which =
      'only' in selection
        ? eq(oidcModels.uid, selection.only)
        : selection.allBut === null
          ? undefined
          : or(isNull(oidcModels.uid), sql`${oidcModels.uid} <> ${selection.allBut}`);
    const removed = await tx
      .delete(oidcModels)
      .where(and(eq(oidcModels.model, 'Session'), eq(accountOf, accountId), which))
      .returning({ uid: oidcModels.uid, payload: oidcModels.payload });
    const ended = removed.map((row) => storedSession({ ...row, activity: null })).filter((session) => session.uid !== '');
    if (ended.length === 0) return [];
    const uids = ended.map((session) => session.uid);
    const grantIds = ended.flatMap((session) =>
      Object.values(session.authorizations).flatMap((authorization) => (authorization.grantId ? [authorization.grantId] : [])),
    );
    if (grantIds.length > 0)
      await tx
        .delete(oidcModels)
        .where(or(inArray(oidcModels.grantId, grantIds), and(eq(oidcModels.model, 'Grant'), inArray(oidcModels.id, grantIds))));
    await listAsEnded(tx, uids, listedUntil);
    return ended;
  });
}

/** Lists sessions as ended until `listedUntil` and drops their factors and descriptions. */
async function listAsEnded(db: Database, uids: string[], listedUntil: Date): Promise<void> {
  await db.delete(providerSessionFactors).where(inArray(providerSessionFactors.sessionUid, uids));
  await db.delete(sessionActivity).where(inArray(sessionActivity.sessionUid, uids));
  await db
    .insert(endedSessions)
    .values(uids.map((sessionUid) => ({ sessionUid, expiresAt: listedUntil })))
    .onConflictDoUpdate({ target: endedSessions.sessionUid, set: { expiresAt: listedUntil } });
}

/**
 * A session the provider has already removed (its user signed out at the provider): listed as ended until
 * `listedUntil`, its factors and description dropped, in one transaction.
 */
export async function listSignedOutSession(db: Database, sessionUid: string, listedUntil: Date): Promise<void> {
  await db.transaction((tx) => listAsEnded(tx, [sessionUid], listedUntil));
}

/** A completed sign-in step in a session's browser: creates its description or brings it up to date. */
export async function recordSessionSignIn(
  db: Database,
  record: { sessionUid: string; userId: string; userAgent: string | null; address: string | null },
): Promise<void> {
  const values = { userId: record.userId, userAgent: record.userAgent, address: record.address, lastUsedAt: new Date() };
  await db
    .insert(sessionActivity)
    .values({ sessionUid: record.sessionUid, ...values })
    .onConflictDoUpdate({ target: sessionActivity.sessionUid, set: values });
}

/** A session used through a client (an authorization or a refresh): its last use, and by which client. */
export async function recordSessionUse(db: Database, sessionUid: string, clientId: string): Promise<void> {
  await db.update(sessionActivity).set({ clientId, lastUsedAt: new Date() }).where(eq(sessionActivity.sessionUid, sessionUid));
}

/** The ended sessions (and revoked apps, see connected-apps.ts) whose tokens may still be alive. */
export async function listEndedSessions(db: Database, now = new Date()): Promise<{ sessionUid: string; endedAt: Date; expiresAt: Date }[]> {
  return db
    .select({ sessionUid: endedSessions.sessionUid, endedAt: endedSessions.endedAt, expiresAt: endedSessions.expiresAt })
    .from(endedSessions)
    .where(gt(endedSessions.expiresAt, now));
}

/** Removes ended-session entries past their tokens' life, and descriptions of sessions that are gone; returns how many. */
export async function purgeSessionRecords(db: Database, now = new Date()): Promise<number> {
  const ended = await db.delete(endedSessions).where(lte(endedSessions.expiresAt, now)).returning({ uid: endedSessions.sessionUid });
  const orphaned = await db
    .delete(sessionActivity)
    .where(
      notExists(
        db
          .select({ uid: oidcModels.uid })
          .from(oidcModels)
          .where(and(liveSession(now), eq(oidcModels.uid, sessionActivity.sessionUid))),
      ),
    )
    .returning({ uid: sessionActivity.sessionUid });
  return ended.length + orphaned.length;
}
