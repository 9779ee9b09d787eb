import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  customType,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

/**
 * Accounts. `email` is stored lower-cased: callers must normalise it (e.g.
 * `email.trim().toLowerCase()`) before inserting or querying. The CHECK constraint
 * rejects mixed-case values so a forgotten normalisation fails loudly instead of
 * silently allowing `A@x.io` next to `a@x.io`; with that guarantee a plain UNIQUE on
 * `email` is case-insensitive in effect and `ON CONFLICT (email)` stays usable.
 */
export const users = pgTable(
  'users',
  {
    // gen_random_uuid() is built in since PostgreSQL 13 and in PGlite (no pgcrypto).
    id: uuid('id').primaryKey().defaultRandom(),
    email: text('email').notNull().unique('users_email_key'),
    displayName: text('display_name'),
    emailVerified: boolean('email_verified').notNull().default(false),
    /** a suspended user is refused everywhere, even with a still-valid token */
    suspended: boolean('suspended').notNull().default(false),
    /** platform super-admin: passes every non-binding ability */
    superAdmin: boolean('super_admin').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' })
      .notNull()
      .defaultNow()
      // Drizzle adds this to every UPDATE it builds; uses the server clock like the default.
      .$onUpdateFn(() => sql`now()`),
  },
  (t) => [check('users_email_lowercase_check', sql`${t.email} = lower(${t.email})`)],
);

export type UserRow = typeof users.$inferSelect;
export type NewUserRow = typeof users.$inferInsert;

export const plan = pgEnum('plan', ['FREE', 'PRO']);
export const role = pgEnum('role', ['OWNER', 'ADMIN', 'EDITOR', 'VIEWER']);
export const documentStatus = pgEnum('document_status', ['DRAFT', 'PUBLISHED', 'ARCHIVED']);

/** Tenants. */
export const organizations = pgTable(
  'organizations',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    slug: text('slug').notNull().unique('organizations_slug_key'),
    name: text('name').notNull(),
    plan: plan('plan').notNull().default('FREE'),
    billingEmail: text('billing_email'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [check('organizations_slug_format_check', sql`${t.slug} ~ '^[a-z0-9][a-z0-9-]{0,62}$'`)],
);

/** A user's role in one organization (OWNER > ADMIN > EDITOR > VIEWER). */
export const memberships = pgTable(
  'memberships',
  {
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: role('role').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.userId] }), index('memberships_user_idx').on(t.userId)],
);

export const documents = pgTable(
  'documents',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    ownerId: uuid('owner_id')
      .notNull()
      .references(() => users.id),
    title: text('title').notNull(),
    body: text('body').notNull().default(''),
    status: documentStatus('status').notNull().default('DRAFT'),
    legalHold: boolean('legal_hold').notNull().default(false),
    /** before this instant the document is invisible to VIEWERs */
    embargoUntil: timestamp('embargo_until', { withTimezone: true, mode: 'date' }),
    internalNotes: text('internal_notes'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' })
      .notNull()
      .defaultNow()
      .$onUpdateFn(() => sql`now()`),
  },
  (t) => [
    // "title taken" is a business failure reported as payload data; the index makes it race-free.
    uniqueIndex('documents_organization_title_key').on(t.organizationId, t.title),
    // keyset pagination within an organization: (created_at, id)
    index('documents_organization_created_idx').on(t.organizationId, t.createdAt, t.id),
    check('documents_title_length_check', sql`char_length(${t.title}) between 1 and 200`),
  ],
);

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
  ],
);
export type OidcModelRow = typeof oidcModels.$inferSelect;
export type NewOidcModelRow = typeof oidcModels.$inferInsert;

/**
 * bytea as a plain Uint8Array on both drivers: postgres-js hands back a Buffer, PGlite a Uint8Array; the
 * copy makes callers independent of which (and of a Buffer's shared pool memory).
 */
const bytea = customType<{ data: Uint8Array<ArrayBuffer>; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  toDriver: (value) => Buffer.from(value.buffer, value.byteOffset, value.byteLength),
  fromDriver: (value) => new Uint8Array(value),
});

/**
 * WebAuthn credentials (spec "Passkeys" 3: registered credentials and user handles need durable storage).
 * `id` is the credential id as the browser reports it (base64url). `user_handle` is the WebAuthn user.id
 * (base64url of random bytes), never the account's uuid, so an authenticator holds nothing that names the
 * account. `rp_id` is the relying-party ID the credential is scoped to (rule 4): it is only ever accepted
 * for that RP ID. The public key is the COSE key as the authenticator sent it, kept as bytes.
 */
export const passkeys = pgTable(
  'passkeys',
  {
    id: text('id').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    userHandle: text('user_handle').notNull(),
    publicKey: bytea('public_key').notNull(),
    /** the authenticator's signature counter: an unsigned 32-bit value, hence bigint */
    counter: bigint('counter', { mode: 'number' }).notNull().default(0),
    transports: text('transports').array().notNull().default(sql`'{}'::text[]`),
    /** 'singleDevice' or 'multiDevice' (synced passkey) */
    deviceType: text('device_type').notNull(),
    backedUp: boolean('backed_up').notNull(),
    aaguid: text('aaguid').notNull(),
    label: text('label'),
    rpId: text('rp_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('passkeys_user_idx').on(t.userId),
    check('passkeys_counter_check', sql`${t.counter} between 0 and 4294967295`),
    check('passkeys_label_length_check', sql`char_length(${t.label}) between 1 and 64`),
  ],
);
export type PasskeyRow = typeof passkeys.$inferSelect;
export type NewPasskeyRow = typeof passkeys.$inferInsert;

/**
 * In-flight WebAuthn challenges, kept in the database rather than in process memory so that any instance
 * can finish a ceremony another one started and a restart loses nothing. A row is consumed by deleting it
 * (single use). `binding_hash` is a SHA-256 of the value (e.g. the browser session id) the caller bound
 * the ceremony to: a challenge is only accepted back from the same session. `user_handle` is the WebAuthn
 * user.id offered in registration options, remembered until the credential is stored.
 */
export const webauthnChallenges = pgTable(
  'webauthn_challenges',
  {
    id: text('id').primaryKey(),
    challenge: text('challenge').notNull(),
    purpose: text('purpose', { enum: ['registration', 'authentication'] }).notNull(),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
    userHandle: text('user_handle'),
    bindingHash: text('binding_hash').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('webauthn_challenges_challenge_key').on(t.challenge),
    index('webauthn_challenges_expires_idx').on(t.expiresAt),
    check('webauthn_challenges_purpose_check', sql`${t.purpose} in ('registration', 'authentication')`),
  ],
);
export type WebAuthnChallengeRow = typeof webauthnChallenges.$inferSelect;

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
 * An authenticator app (TOTP, RFC 6238) per account. The shared secret is needed to verify codes, so it is
 * stored encrypted (AES-256-GCM under a key derived from the signing key), never in clear. It counts as a
 * factor only once `confirmed_at` is set (a code from the app was shown back). `last_used_step` is the time
 * step of the last accepted code: a code of that step or an earlier one is a replay.
 */
export const totpCredentials = pgTable('totp_credentials', {
  userId: uuid('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  secretCiphertext: text('secret_ciphertext').notNull(),
  confirmedAt: timestamp('confirmed_at', { withTimezone: true, mode: 'date' }),
  lastUsedStep: bigint('last_used_step', { mode: 'number' }),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});
export type TotpCredentialRow = typeof totpCredentials.$inferSelect;

/** Recovery codes: generated once, shown once, stored as SHA-256 hashes only, each consumed by deleting it. */
export const recoveryCodes = pgTable(
  'recovery_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('recovery_codes_user_idx').on(t.userId)],
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

/**
 * An optional password per account (issue 5): the argon2id PHC string only (algorithm, version, parameters,
 * salt and hash), never the password. Set or changed only after a fresh strong sign-in (the caller's rule).
 */
export const passwordCredentials = pgTable('password_credentials', {
  userId: uuid('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  passwordHash: text('password_hash').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});
export type PasswordCredentialRow = typeof passwordCredentials.$inferSelect;

/**
 * An identity at the upstream OpenID provider linked to an account (issue 5, factor AUTHORIZATION_CODE): the
 * pair (issuer, subject) of its ID tokens, which is how sign-ins find the account (never by e-mail). One pair
 * belongs to one account; an account may link several.
 */
export const federatedIdentities = pgTable(
  'federated_identities',
  {
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.issuer, t.subject] }), index('federated_identities_user_idx').on(t.userId)],
);
export type FederatedIdentityRow = typeof federatedIdentities.$inferSelect;

/**
 * Persisted GraphQL operations (issue 6), by the SHA-256 of their text (64 lower-case hex digits). `source`
 * says how a row got here: `apq` (registered at run time by a client, evicted least recently used beyond the
 * store's cap) or `allowlist` (imported at deploy time from the client manifest; never evicted, the only rows
 * served in allowlist mode). `last_used_at` is refreshed at most every few minutes per instance.
 */
export const persistedOperations = pgTable(
  'persisted_operations',
  {
    hash: text('hash').primaryKey(),
    query: text('query').notNull(),
    source: text('source', { enum: ['apq', 'allowlist'] }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    check('persisted_operations_hash_check', sql`${t.hash} ~ '^[0-9a-f]{64}$'`),
    check('persisted_operations_source_check', sql`${t.source} in ('apq', 'allowlist')`),
    index('persisted_operations_lru_idx').on(t.source, t.lastUsedAt),
  ],
);
export type PersistedOperationRow = typeof persistedOperations.$inferSelect;

/**
 * The outbox of document events (issue 13): one row per committed change to a document, written in the change's
 * own transaction, so it is the only record of the event (NOTIFY and Redis merely wake the instances, which read
 * this table in `seq` order). `event` holds the ids and the few attributes the visibility rule needs, never
 * content. `created_at` is the clock at insert (close to the commit, unlike `now()`); rows older than the
 * retention are purged.
 */
export const documentEvents = pgTable('document_events', {
  seq: bigserial('seq', { mode: 'number' }).primaryKey(),
  event: jsonb('event').$type<Record<string, unknown>>().notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().default(sql`clock_timestamp()`),
});
export type DocumentEventRow = typeof documentEvents.$inferSelect;

/**
 * One row (id 1, written by the first purge): every `document_events` row up to `through_seq` may have been
 * purged. A reader behind it cannot tell a purged event from a rolled-back change, so it knows it lost events.
 */
export const documentEventsPurged = pgTable(
  'document_events_purged',
  {
    id: smallint('id').primaryKey(),
    throughSeq: bigint('through_seq', { mode: 'number' }).notNull(),
  },
  (t) => [check('document_events_purged_one_row_check', sql`${t.id} = 1`)],
);

export type OrganizationRow = typeof organizations.$inferSelect;
export type MembershipRow = typeof memberships.$inferSelect;
export type DocumentRow = typeof documents.$inferSelect;
export type NewDocumentRow = typeof documents.$inferInsert;
export type Role = (typeof role.enumValues)[number];
export type Plan = (typeof plan.enumValues)[number];
export type DocumentStatus = (typeof documentStatus.enumValues)[number];
