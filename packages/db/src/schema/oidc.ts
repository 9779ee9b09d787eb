import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

// The OpenID provider's storage.

/**
 * Storage of the OpenID provider (oidc-provider's adapter contract): one table for every model, keyed by
 * (model, id), so a new model needs no migration. The payload is kept verbatim as jsonb; the columns beside
 * it only copy what the provider looks rows up by (grant, session uid, device user code) and when a row
 * stops counting. A null `expires_at` never expires (e.g. dynamically registered clients).
 */
export const oidcModels = pgTable(
  'oidc_models',
  {
    /** oidc-provider model name: 'Session', 'AccessToken', 'Grant', ... */
    model: text('model').notNull(),
    id: text('id').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    grantId: text('grant_id'),
    userCode: text('user_code'),
    uid: text('uid'),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }),
    consumedAt: timestamp('consumed_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    primaryKey({ columns: [t.model, t.id] }),
    // revokeByGrantId deletes across models, so the grant index leads with grant_id alone.
    index('oidc_models_grant_id_idx').on(t.grantId),
    index('oidc_models_uid_idx').on(t.model, t.uid),
    index('oidc_models_user_code_idx').on(t.userCode),
    index('oidc_models_expires_at_idx').on(t.expiresAt),
    // An account's sessions (the sessions page, ending them) without reading every stored model.
    index('oidc_models_session_account_idx').on(sql`(${t.payload} ->> 'accountId')`).where(sql`${t.model} = 'Session'`),
  ],
);
export type OidcModelRow = typeof oidcModels.$inferSelect;
export type NewOidcModelRow = typeof oidcModels.$inferInsert;
