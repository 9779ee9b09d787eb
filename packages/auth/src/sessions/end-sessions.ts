import { endAccountSessions, listSignedOutSession, type Database, type SessionSelection, type StoredSession } from '@latchkey/db';
import type Provider from 'oidc-provider';
import type { AuditParties, AuditTrail } from '../audit/index.js';
import type { EndedSessions } from './ended-sessions.js';

export interface SessionEndingOptions {
  /** how long the provider's access tokens live, in seconds (its AccessToken TTL) */
  accessTokenTtlSeconds: number;
  /** JWT_CLOCK_SKEW in seconds: a token is accepted this long past its `exp` */
  clockSkewSeconds: number;
  /** this instance's list of ended sessions, told at once (other instances read the table) */
  endedSessions?: EndedSessions;
  /** the provider, to send back-channel logout tokens to the clients used in an ended session */
  provider?: Provider;
  /** told of each back-channel logout that failed (the client's answer or its absence) */
  onBackchannelError?: (error: unknown, detail: { clientId: string }) => void;
  /** where each ended session is recorded (`session.ended`) */
  audit?: AuditTrail;
}

/** Why sessions end, and who ended them from which request: the `session.ended` events. */
export interface SessionEndingCause extends AuditParties {
  /** e.g. `ended by its user`, `ended by an administrator`, `ended by the operator` */
  reason: string;
}

type BackchannelClient = { backchannelLogoutUri?: string; backchannelLogout(sub: string, sid: string): Promise<void> };

export interface EndedSessionsResult {
  /** how many sessions ended */
  count: number;
  /** settles once every back-channel logout was answered or failed (the clients' time, not the caller's) */
  notified: Promise<void>;
}

/**
 * Ends provider sessions of an account (one, every one but the caller's, or all): the sessions, every grant made
 * in them and every token of those grants go in one transaction, `offline_access` included; access tokens already
 * issued under them are refused by every instance from the next read of the ended list (at most a few seconds);
 * clients with a `backchannel_logout_uri` are sent a logout token.
 */
export function createSessionEnding(options: SessionEndingOptions) {
  const { provider } = options;

  async function notifyClients(ended: StoredSession[]): Promise<void> {
    if (!provider) return;
    const sends = ended.flatMap((session) =>
      Object.entries(session.authorizations).map(async ([clientId, authorization]) => {
        try {
          // (the bundled types lag the runtime: clients have `backchannelLogout` when the feature is on)
          const client = (await provider.Client.find(clientId)) as BackchannelClient | undefined;
          if (!client?.backchannelLogoutUri) return;
          await client.backchannelLogout(session.accountId, authorization.sid ?? '');
        } catch (error) {
          options.onBackchannelError?.(error, { clientId });
        }
      }),
    );
    await Promise.all(sends);
  }

  /** Ends the selected sessions of `accountId` through `db` (the caller's view: its deadline), for `cause`. */
  async function endSessions(
    db: Database,
    accountId: string,
    selection: SessionSelection,
    cause: SessionEndingCause,
  ): Promise<EndedSessionsResult> {
    // The last access token of an ended session was issued at the latest now: refused until it has expired.
    const listedUntil = new Date(Date.now() + listedForMs(options));
    const ended = await endAccountSessions(db, accountId, selection, listedUntil);
    const { reason, ...parties } = cause;
    for (const session of ended) {
      options.endedSessions?.add(session.uid, listedUntil);
      options.audit?.record({ type: 'session.ended', details: { sessionId: session.uid, reason }, subject: accountId, ...parties });
    }
    return { count: ended.length, notified: notifyClients(ended) };
  }

  return endSessions;
}

/** How long an ended session stays listed: until the last access token issued under it has expired. */
const listedForMs = (options: Pick<SessionEndingOptions, 'accessTokenTtlSeconds' | 'clockSkewSeconds'>) =>
  (options.accessTokenTtlSeconds + options.clockSkewSeconds) * 1000;

/**
 * Lists a session the provider has just removed itself (RP-initiated logout, "sign out of Latchkey") as ended, like
 * the sessions `createSessionEnding` ends, so every instance refuses its access tokens within the same bound. Its
 * grants went with it but for `offline_access` ones, which outlive a logout as OpenID Connect intends; the
 * provider has told the clients with a `backchannel_logout_uri` already.
 */
export function createSignedOutListing(options: Omit<SessionEndingOptions, 'provider' | 'onBackchannelError'>) {
  return async function listSignedOut(db: Database, session: { uid: string; accountId: string }, cause: SessionEndingCause): Promise<void> {
    const listedUntil = new Date(Date.now() + listedForMs(options));
    await listSignedOutSession(db, session.uid, listedUntil);
    options.endedSessions?.add(session.uid, listedUntil);
    const { reason, ...parties } = cause;
    options.audit?.record({ type: 'session.ended', details: { sessionId: session.uid, reason }, subject: session.accountId, ...parties });
  };
}

export type EndSessions = ReturnType<typeof createSessionEnding>;
