import { DatabaseUnavailableError, listEndedSessions, parseRevokedAppKey, type Database } from '@latchkey/db';
import { createRevokedApps } from './revoked-apps.js';

export interface EndedSessionsOptions {
  /** the database of the process's own work (statements with a deadline of their own) */
  db: Database;
  /** how often the list is read again, in ms @default 1000 */
  refreshIntervalMs?: number;
  /** how long the list may go unread before sessions cannot be judged, in ms @default 5000 */
  staleAfterMs?: number;
  /** told once when the list cannot be read (then again after it could) */
  onRefreshFailed?: (error: unknown) => void;
  /** @default Date.now */
  now?: () => number;
}

/** A read's rows: ended sessions (uid -> ms until), and revoked apps (key -> [ms revoked, ms until]). */
function splitRows(rows: { sessionUid: string; endedAt: Date; expiresAt: Date }[]) {
  const next = new Map<string, number>();
  const apps = new Map<string, [number, number]>();
  for (const row of rows) {
    if (parseRevokedAppKey(row.sessionUid)) apps.set(row.sessionUid, [row.endedAt.getTime(), row.expiresAt.getTime()]);
    else next.set(row.sessionUid, row.expiresAt.getTime());
  }
  return { next, apps };
}

/** The message of a refusal for want of a fresh list: nothing about sessions. */
const STALE = 'Sessions cannot be checked right now.';

/**
 * The sessions ended on any instance while tokens issued under them may still be alive, kept in memory and read
 * again from the database every `refreshIntervalMs`. `isEnded` is the API's check after its token cache (a Map
 * lookup); when the list has not been read for `staleAfterMs` it throws `DatabaseUnavailableError`, so a token
 * bound to a session is refused with SERVICE_UNAVAILABLE rather than let through on an old list. Ending a
 * session on this instance adds it at once (`add`); subscribers are told when their session ends (`whenEnded`).
 */
export function createEndedSessions(options: EndedSessionsOptions) {
  const refreshIntervalMs = options.refreshIntervalMs ?? 1000;
  const staleAfterMs = options.staleAfterMs ?? 5000;
  const now = options.now ?? Date.now;
  /** session uid -> ms until which its tokens may live */
  let ended = new Map<string, number>();
  let readAt = Number.NEGATIVE_INFINITY;
  let failing = false;
  let timer: NodeJS.Timeout | undefined;
  let reading: Promise<void> | undefined;
  const watchers = new Map<string, Set<() => void>>();
  /** entries this instance added, until a read finds them in the table */
  const locallyAdded = new Map<string, number>();
  /** apps revoked by their users, listed in the same table (revoked-apps.ts) */
  const revokedApps = createRevokedApps(now);

  function tell(sessionUid: string): void {
    const waiting = watchers.get(sessionUid);
    if (!waiting) return;
    watchers.delete(sessionUid);
    for (const callback of waiting) callback();
  }

  async function read(): Promise<void> {
    try {
      const rows = await listEndedSessions(options.db, new Date(now()));
      const { next, apps } = splitRows(rows);
      // An entry added here (`add`) stays until a read sees it in the table (this read may have begun before its commit).
      for (const [uid, until] of locallyAdded) {
        if (next.has(uid) || until <= now()) locallyAdded.delete(uid);
        else next.set(uid, until);
      }
      ended = next;
      revokedApps.replace(apps);
      readAt = now();
      failing = false;
      for (const uid of next.keys()) tell(uid);
    } catch (error) {
      if (!failing) options.onRefreshFailed?.(error);
      failing = true;
    }
  }
  /** One read at a time: a slow database delays the next read instead of piling reads up. */
  function refresh(): Promise<void> {
    reading ??= read().finally(() => (reading = undefined));
    return reading;
  }

  return {
    /** Reads the list once, then keeps reading it. */
    async start(): Promise<void> {
      await refresh();
      timer ??= setInterval(() => void refresh(), refreshIntervalMs);
      timer.unref();
    },
    stop(): void {
      clearInterval(timer);
      timer = undefined;
    },
    refresh,
    /** Whether a session was ended; throws `DatabaseUnavailableError` when the list is too old to say. */
    isEnded(sessionUid: string): boolean {
      const at = now();
      if (at - readAt > staleAfterMs) throw new DatabaseUnavailableError(STALE);
      const until = ended.get(sessionUid);
      return until !== undefined && until > at;
    },
    /** A session this instance has just ended (its row is committed): refused here at once. */
    add(sessionUid: string, until: Date): void {
      ended.set(sessionUid, until.getTime());
      locallyAdded.set(sessionUid, until.getTime());
      tell(sessionUid);
    },
    /** Whether a client's token for a user predates the user's revoking it; `addRevokedApp`: revoked here, at once. */
    isAppRevoked: revokedApps.isRevoked,
    addRevokedApp: revokedApps.add,
    /** Calls `callback` once when the session is seen ended; returns the way to stop waiting. */
    whenEnded(sessionUid: string, callback: () => void): () => void {
      const until = ended.get(sessionUid);
      if (until !== undefined && until > now()) {
        queueMicrotask(callback);
        return () => {};
      }
      let waiting = watchers.get(sessionUid);
      if (!waiting) watchers.set(sessionUid, (waiting = new Set()));
      waiting.add(callback);
      return () => {
        waiting.delete(callback);
        if (waiting.size === 0 && watchers.get(sessionUid) === waiting) watchers.delete(sessionUid);
      };
    },
    /** entries held now (tests, metrics) */
    get size() {
      return ended.size;
    },
  };
}

export type EndedSessions = ReturnType<typeof createEndedSessions>;
