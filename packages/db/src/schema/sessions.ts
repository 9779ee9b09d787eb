import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

// What people see of their provider sessions, and which sessions were ended before their tokens expire.

/**
 * Where and how a provider session is used (by the session's stable uid): the browser's user agent and address
 * at its last sign-in step, the last client it was used through, when it began and when it was last used (a
 * sign-in step, a refresh or a visit to the provider; not every API call). The session itself is the provider's
 * (`oidc_models`); this row only describes it, and goes when the session does.
 */
export const sessionActivity = pgTable(
  'session_activity',
  {
    sessionUid: text('session_uid').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** the OAuth client last used through this session; null until an application used it */
    clientId: text('client_id'),
    /** the browser's User-Agent, cut to 256 characters */
    userAgent: text('user_agent'),
    /** the client address (TRUST_PROXY decides whose forwarded headers count) */
    address: text('address'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('session_activity_user_idx').on(t.userId)],
);
export type SessionActivityRow = typeof sessionActivity.$inferSelect;

/**
 * Sessions ended by their user or an administrator, while access tokens issued under them may still be alive:
 * every instance refuses a token whose `sid` is listed. A row lives until the last such token has expired (plus
 * the clock skew), then it is purged.
 */
export const endedSessions = pgTable(
  'ended_sessions',
  {
    sessionUid: text('session_uid').primaryKey(),
    endedAt: timestamp('ended_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [index('ended_sessions_expires_idx').on(t.expiresAt)],
);
