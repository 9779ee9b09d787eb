import { sql } from 'drizzle-orm';
import { boolean, check, index, pgEnum, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

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
 */
export const oneTimeTokens = pgTable(
  'one_time_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    /** the normalised username (lower-cased e-mail) the token signs in */
    username: text('username').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [index('one_time_tokens_expires_idx').on(t.expiresAt), index('one_time_tokens_username_idx').on(t.username)],
);
export type OneTimeTokenRow = typeof oneTimeTokens.$inferSelect;

export type OrganizationRow = typeof organizations.$inferSelect;
export type MembershipRow = typeof memberships.$inferSelect;
export type DocumentRow = typeof documents.$inferSelect;
export type NewDocumentRow = typeof documents.$inferInsert;
export type Role = (typeof role.enumValues)[number];
export type Plan = (typeof plan.enumValues)[number];
export type DocumentStatus = (typeof documentStatus.enumValues)[number];
