import { sql } from 'drizzle-orm';
import { boolean, check, index, pgEnum, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

// Accounts and tenants: users, organizations and the role of each user in each organization.

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

export type OrganizationRow = typeof organizations.$inferSelect;
export type MembershipRow = typeof memberships.$inferSelect;
export type Role = (typeof role.enumValues)[number];
export type Plan = (typeof plan.enumValues)[number];
