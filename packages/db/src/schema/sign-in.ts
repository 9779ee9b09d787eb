import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

// Sign-in state: one-time tokens and their short codes, sign-ins in progress, the factors behind a provider
// session, and remembered browsers.

/**
 * One-time login tokens (spec "One-time token login"). Only a SHA-256 hash of the token is stored: the
 * value itself exists in the delivered message alone. A row is consumed by deleting it (single use).
 *
 * A row may also carry a short numeric code, a second way of presenting the same credential: typed into the
 * browser that asked for it. `binding_hash` is a SHA-256 of that browser's binding value (an HttpOnly cookie)
 * and `code_hash` an HMAC of the code keyed by the binding value, so a stolen table yields no code. Using the
 * link or the code deletes the row (both die together); `code_attempts` counts guesses at the code, and once
 * the code's budget is spent or its browser is stopped, the code columns are nulled (the link lives on).
 */
export const oneTimeTokens = pgTable(
  'one_time_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    /** the normalised username (lower-cased e-mail) the token signs in */
    username: text('username').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** HMAC-SHA256 of the short code (keyed by the browser binding); null: no code, or the code is dead */
    codeHash: text('code_hash'),
    /** SHA-256 of the binding value of the browser the code was asked from */
    bindingHash: text('binding_hash'),
    /** guesses at the code so far (right or wrong) */
    codeAttempts: integer('code_attempts').notNull().default(0),
  },
  (t) => [
    index('one_time_tokens_expires_idx').on(t.expiresAt),
    index('one_time_tokens_username_idx').on(t.username),
    index('one_time_tokens_username_binding_idx').on(t.username, t.bindingHash),
  ],
);
export type OneTimeTokenRow = typeof oneTimeTokens.$inferSelect;

/** A factor proven in a sign-in: which one and when (epoch seconds). Kept as JSON beside the sign-in. */
export interface StoredFactorGrant {
  factor: string;
  issuedAt: number;
}

/**
 * A sign-in in progress in one browser (spec Multi-factor rules 1: the service moves the user between factor
 * pages until the rule is met): the account and the factors proven so far. Found by the SHA-256 of a random
 * value in an HttpOnly cookie; consumed by deleting it when the sign-in completes; short-lived.
 */
export const signInProgress = pgTable(
  'sign_in_progress',
  {
    idHash: text('id_hash').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    factors: jsonb('factors').$type<StoredFactorGrant[]>().notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('sign_in_progress_expires_idx').on(t.expiresAt)],
);

/**
 * The factors behind a provider session (by the session's stable uid), so that rules with validity
 * durations, `acr_values` and step-up can be judged on every later authorization request. Expires with
 * the session.
 */
export const providerSessionFactors = pgTable(
  'provider_session_factors',
  {
    sessionUid: text('session_uid').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    factors: jsonb('factors').$type<StoredFactorGrant[]>().notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('provider_session_factors_expires_idx').on(t.expiresAt)],
);

/**
 * "Remember this device" (spec Multi-factor rules 5): a long-lived bearer cookie, stored as a SHA-256 hash.
 * It may suppress a second factor on this browser; it is never a factor itself. Revocable by its owner.
 */
export const rememberedDevices = pgTable(
  'remembered_devices',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    label: text('label').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [uniqueIndex('remembered_devices_token_key').on(t.tokenHash), index('remembered_devices_user_idx').on(t.userId)],
);
export type RememberedDeviceRow = typeof rememberedDevices.$inferSelect;
