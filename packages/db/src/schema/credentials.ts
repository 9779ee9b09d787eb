import { sql } from 'drizzle-orm';
import { bigint, boolean, check, customType, index, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';

// The credentials an account may hold besides its e-mail: passkeys (and their in-flight challenges), an
// authenticator app, recovery codes, a password, and linked upstream identities.

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
 * An optional password per account: the argon2id PHC string only (algorithm, version, parameters,
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
 * An identity at the upstream OpenID provider linked to an account (factor AUTHORIZATION_CODE): the
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
