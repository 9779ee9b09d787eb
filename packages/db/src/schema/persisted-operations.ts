import { sql } from 'drizzle-orm';
import { check, index, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

// Persisted GraphQL operations.

/**
 * Persisted GraphQL operations, by the SHA-256 of their text (64 lower-case hex digits). `source`
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
