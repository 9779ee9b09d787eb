import { listAccountSessions, type Database } from '@latchkey/db';

/** A provider session as its user (or an administrator) sees it. */
export interface SessionView {
  /** the session's stable uid: the `sid` of the access tokens issued under it */
  id: string;
  /** whether the caller's own token was issued under this session */
  current: boolean;
  /** the OAuth client last used through it; null when only the provider's own pages were */
  client: string | null;
  userAgent: string | null;
  address: string | null;
  /** how the session's last sign-in was made (RFC 8176) */
  amr: string[];
  createdAt: Date;
  /** its last sign-in step, refresh or visit to the provider (not every API call) */
  lastUsedAt: Date;
}

/** An account's live sessions, most recently used first; `currentSessionId` is the caller's token's `sid`. */
export async function listSessions(db: Database, accountId: string, currentSessionId: string | null): Promise<SessionView[]> {
  const sessions = await listAccountSessions(db, accountId);
  return sessions.map((session) => {
    const signedInAt = new Date((session.loginTs ?? 0) * 1000);
    return {
      id: session.uid,
      current: session.uid === currentSessionId,
      client: session.activity?.clientId ?? null,
      userAgent: session.activity?.userAgent ?? null,
      address: session.activity?.address ?? null,
      amr: session.amr,
      createdAt: session.activity?.createdAt ?? signedInAt,
      lastUsedAt: session.activity?.lastUsedAt ?? signedInAt,
    };
  });
}

/** Session ids are the provider's uids (nanoid): anything else names no session. */
export const isSessionId = (value: string) => /^[A-Za-z0-9_-]{10,64}$/.test(value);
