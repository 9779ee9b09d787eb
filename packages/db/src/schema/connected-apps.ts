import { index, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

/**
 * The third-party apps a person allowed (the Connected apps list): one row per user and client, naming the
 * provider's grant (`oidc_models`, model Grant) that holds what was allowed. A later consent for more scopes
 * extends the same grant and row; revoking removes the row, the grant and its tokens.
 */
export const connectedApps = pgTable(
  'connected_apps',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull(),
    /** the provider's grant for this user and client (remembered across sessions) */
    grantId: text('grant_id').notNull(),
    /** every scope allowed so far, space-separated (OpenID's and the API's) */
    scope: text('scope').notNull(),
    /** when the person first allowed the app */
    grantedAt: timestamp('granted_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** the last consent, authorization or token issued (code exchange, refresh) for it */
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.clientId] }), index('connected_apps_grant_idx').on(t.grantId)],
);
export type ConnectedAppRow = typeof connectedApps.$inferSelect;
