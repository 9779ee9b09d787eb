import { count, eq, persistedOperations, sql, type Database } from '@latchkey/db';
import { LRUCache } from 'lru-cache';
import type { PersistedOperation, PersistedOperationStore, PersistedSource } from './types.js';

export interface PersistedStoreOptions {
  /** the shared, durable store (every instance and restart sees a registration); without it, memory only */
  db?: Database;
  /** operations held in this process (parsed and validated documents included). @default 1000 */
  cacheSize?: number;
  /** APQ registrations kept in the database; beyond it the least recently used are deleted. @default 10000 */
  maxRegistrations?: number;
  /** how often, at most, a hit refreshes the row's `last_used_at` (so the LRU order is shared). @default 300 */
  touchIntervalSeconds?: number;
  /** told about a failed background refresh of `last_used_at` (the request itself is unaffected) */
  onBackgroundError?: (error: unknown) => void;
}

interface Held extends PersistedOperation {
  touchedAt: number;
}

/** Writes allowlist entries into the table in one transaction, 500 rows a statement; resolves to the rows added or made allowlist rows. */
function writeAllowlist(db: Database, entries: readonly { hash: string; query: string }[]): Promise<number> {
  return db.transaction(async (tx) => {
    let added = 0;
    for (let start = 0; start < entries.length; start += 500) {
      const batch = entries.slice(start, start + 500);
      const changed = await tx
        .insert(persistedOperations)
        .values(batch.map(({ hash, query }) => ({ hash, query, source: 'allowlist' as const })))
        .onConflictDoUpdate({
          target: persistedOperations.hash,
          set: { source: 'allowlist', query: sql`excluded.query` },
          setWhere: sql`${persistedOperations.source} <> 'allowlist'`,
        })
        .returning({ hash: persistedOperations.hash });
      added += changed.length;
    }
    return added;
  });
}

/**
 * The persisted-operation store: an LRU in this process in front of the `persisted_operations` table. Reads
 * go to memory first; a miss reads the table (so a registration on another instance, or before a restart, is
 * found). Registrations write through. The table is bounded: after each new registration, APQ rows beyond
 * `maxRegistrations` are deleted, least recently used first. Without a database it is a bounded LRU in memory
 * (the embedded single-instance default of tests and tools).
 */
export function createPersistedStore(options: PersistedStoreOptions = {}): PersistedOperationStore {
  const { db } = options;
  const maxRegistrations = options.maxRegistrations ?? 10_000;
  const touchIntervalMs = (options.touchIntervalSeconds ?? 300) * 1000;
  const onBackgroundError = options.onBackgroundError ?? (() => {});
  if (!Number.isInteger(maxRegistrations) || maxRegistrations < 1) throw new RangeError('maxRegistrations must be a positive integer');
  const cache = new LRUCache<string, Held>({ max: Math.max(1, options.cacheSize ?? 1000) });
  // Without a database the memory LRU is the store: its own size bounds the registrations.
  const memoryOnly = new LRUCache<string, Held>({ max: maxRegistrations });
  const held = (hash: string, query: string, source: PersistedSource): Held => ({ hash, query, source, touchedAt: Date.now() });

  function touch(entry: Held): void {
    if (!db || Date.now() - entry.touchedAt < touchIntervalMs) return;
    entry.touchedAt = Date.now();
    db.update(persistedOperations)
      .set({ lastUsedAt: sql`now()` })
      .where(eq(persistedOperations.hash, entry.hash))
      .then(() => undefined, onBackgroundError);
  }

  async function get(hash: string, { allowlistOnly = false } = {}): Promise<PersistedOperation | undefined> {
    let entry = cache.get(hash) ?? (db ? undefined : memoryOnly.get(hash));
    if (!entry && db) {
      const [row] = await db
        .update(persistedOperations)
        .set({ lastUsedAt: sql`now()` })
        .where(eq(persistedOperations.hash, hash))
        .returning({ query: persistedOperations.query, source: persistedOperations.source });
      if (row) {
        entry = held(hash, row.query, row.source);
        cache.set(hash, entry);
      }
    }
    if (!entry || (allowlistOnly && entry.source !== 'allowlist')) return undefined;
    touch(entry);
    return entry;
  }

  async function register(hash: string, query: string): Promise<void> {
    if (!db) {
      if (!memoryOnly.has(hash)) memoryOnly.set(hash, held(hash, query, 'apq'));
      return;
    }
    const inserted = await db
      .insert(persistedOperations)
      .values({ hash, query, source: 'apq' })
      .onConflictDoNothing()
      .returning({ hash: persistedOperations.hash });
    if (inserted.length > 0) {
      // Bounded: the APQ rows beyond the cap, least recently used first, go (allowlist rows never do).
      await db.execute(sql`
        delete from ${persistedOperations} where ${persistedOperations.hash} in (
          select ${persistedOperations.hash} from ${persistedOperations}
          where ${persistedOperations.source} = 'apq'
          order by ${persistedOperations.lastUsedAt} desc, ${persistedOperations.createdAt} desc
          offset ${maxRegistrations}
        )`);
    }
    if (!cache.has(hash)) cache.set(hash, held(hash, query, 'apq'));
  }

  async function importAllowlist(entries: readonly { hash: string; query: string }[]): Promise<{ added: number; unchanged: number }> {
    let added = 0;
    if (!db) {
      for (const { hash, query } of entries) {
        if (memoryOnly.get(hash)?.source === 'allowlist') continue;
        memoryOnly.set(hash, held(hash, query, 'allowlist'));
        cache.delete(hash);
        added += 1;
      }
      return { added, unchanged: entries.length - added };
    }
    added = await writeAllowlist(db, entries);
    for (const { hash } of entries) cache.delete(hash);
    return { added, unchanged: entries.length - added };
  }

  async function countBySource(): Promise<Record<PersistedSource, number>> {
    const totals: Record<PersistedSource, number> = { apq: 0, allowlist: 0 };
    if (!db) {
      for (const entry of memoryOnly.values()) totals[entry.source] += 1;
      return totals;
    }
    const rows = await db
      .select({ source: persistedOperations.source, n: count() })
      .from(persistedOperations)
      .groupBy(persistedOperations.source);
    for (const row of rows) totals[row.source as PersistedSource] = Number(row.n);
    return totals;
  }

  return { get, register, importAllowlist, count: countBySource };
}
