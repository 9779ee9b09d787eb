import { sql } from 'drizzle-orm';
import { check, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

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
