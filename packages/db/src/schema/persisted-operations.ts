import { sql } from 'drizzle-orm';
import { check, foreignKey, index, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

// Persisted GraphQL operations, and the app versions whose trusted documents they are.

/**
 * Persisted GraphQL operations, by the SHA-256 of their text (64 lower-case hex digits). `source`
 * says how a row got here: `apq` (registered at run time by a client, evicted least recently used beyond the
 * store's cap) or `allowlist` (imported at deploy time from a client's manifest; never evicted, the only rows
 * served in allowlist mode; removed when every app version holding it is retired). `last_used_at` is refreshed
 * at most every few minutes per instance.
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
 * One imported manifest: an app and its version (`persisted import --app NAME --version V`; an import without
 * `--app` is the app `unnamed`, version `-`). `retired_at` is set by `persisted retire`: a retired version keeps
 * its row and its list of documents (history), but holds none of them on the allowlist any more.
 */
export const persistedAppVersions = pgTable(
  'persisted_app_versions',
  {
    app: text('app').notNull(),
    version: text('version').notNull(),
    importedAt: timestamp('imported_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    retiredAt: timestamp('retired_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [primaryKey({ columns: [t.app, t.version] })],
);
export type PersistedAppVersionRow = typeof persistedAppVersions.$inferSelect;

/**
 * Which documents each app version imported. A document shared by several versions is one row of
 * `persisted_operations` and one row here per version; it stays on the allowlist while an active (not retired)
 * version lists it. No foreign key to `persisted_operations`: a retired version's list outlives its documents.
 */
export const persistedAppDocuments = pgTable(
  'persisted_app_documents',
  {
    app: text('app').notNull(),
    version: text('version').notNull(),
    hash: text('hash').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.app, t.version, t.hash] }),
    foreignKey({
      name: 'persisted_app_documents_version_fk',
      columns: [t.app, t.version],
      foreignColumns: [persistedAppVersions.app, persistedAppVersions.version],
    }).onDelete('cascade'),
    index('persisted_app_documents_hash_idx').on(t.hash),
  ],
);

/**
 * The last use of each deprecated schema coordinate (`Type.field`, `Type.field.argument`, `Enum.VALUE`,
 * `Input.field`) by each client (a token's `client_id`, an imported app's name, or `unknown`). Written at most
 * once a minute per pair and instance; `pnpm latchkey schema usage` and `schema check` read it.
 */
export const deprecatedUses = pgTable(
  'deprecated_uses',
  {
    coordinate: text('coordinate').notNull(),
    client: text('client').notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.coordinate, t.client] })],
);
export type DeprecatedUseRow = typeof deprecatedUses.$inferSelect;
