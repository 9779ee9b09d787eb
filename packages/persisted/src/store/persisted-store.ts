import { isDatabaseUnavailable, type Database } from '@latchkey/db';
import { LRUCache } from 'lru-cache';
import { importAppVersion, UNNAMED_APP, UNNAMED_VERSION, type AppVersion } from './app-versions.js';
import { countRowsBySource, insertRegistration, readAndTouchRow, readSource, touchRow } from './operation-rows.js';
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
  /**
   * How long this process serves an operation before it reads its row again: an operation removed from the table
   * (an app version retired on another process) is refused by every instance within this delay.
   * @default RECHECK_SECONDS (10)
   */
  recheckSeconds?: number;
  /** @default Date.now */
  now?: () => number;
  /** told about a failed background refresh of `last_used_at`, or a re-read the database could not answer (the request is served as held) */
  onBackgroundError?: (error: unknown) => void;
}

/** How long, by default, a process serves a persisted operation before it reads its row again. */
export const RECHECK_SECONDS = 10;

interface Held extends PersistedOperation {
  /** when this process last refreshed the row's `last_used_at` */
  touchedAt: number;
  /** when this process last read the row */
  checkedAt: number;
}

/** Without a database there is one pool of allowlist entries in memory (app versions are not recorded): how many were added. */
function addToPool(
  pool: LRUCache<string, Held>,
  entries: readonly { hash: string; query: string }[],
  hold: (hash: string, query: string) => Held,
): number {
  let added = 0;
  for (const { hash, query } of entries) {
    if (pool.get(hash)?.source === 'allowlist') continue;
    pool.set(hash, hold(hash, query));
    added += 1;
  }
  return added;
}

function countPool(pool: LRUCache<string, Held>): Record<PersistedSource, number> {
  const totals: Record<PersistedSource, number> = { apq: 0, allowlist: 0 };
  for (const entry of pool.values()) totals[entry.source] += 1;
  return totals;
}

/**
 * The persisted-operation store: an LRU in this process in front of the `persisted_operations` table. Reads
 * go to memory first; a miss reads the table (so a registration on another instance, or before a restart, is
 * found), and an entry held longer than `recheckSeconds` is read again (so a document retired elsewhere stops
 * running everywhere within that delay). Registrations write through. The table is bounded: after each new
 * registration, APQ rows beyond `maxRegistrations` are deleted, least recently used first. Without a database it
 * is a bounded LRU in memory (unit tests).
 */
export function createPersistedStore(options: PersistedStoreOptions = {}): PersistedOperationStore {
  const { db } = options;
  const maxRegistrations = options.maxRegistrations ?? 10_000;
  const touchIntervalMs = (options.touchIntervalSeconds ?? 300) * 1000;
  const recheckMs = (options.recheckSeconds ?? RECHECK_SECONDS) * 1000;
  const now = options.now ?? Date.now;
  const onBackgroundError = options.onBackgroundError ?? (() => {});
  if (!Number.isInteger(maxRegistrations) || maxRegistrations < 1) throw new RangeError('maxRegistrations must be a positive integer');
  const cache = new LRUCache<string, Held>({ max: Math.max(1, options.cacheSize ?? 1000) });
  // Without a database the memory LRU is the store: its own size bounds the registrations.
  const memoryOnly = new LRUCache<string, Held>({ max: maxRegistrations });
  const held = (hash: string, query: string, source: PersistedSource): Held => ({
    hash,
    query,
    source,
    touchedAt: now(),
    checkedAt: now(),
  });

  function touch(entry: Held): void {
    if (!db || now() - entry.touchedAt < touchIntervalMs) return;
    entry.touchedAt = now();
    touchRow(db, entry.hash).then(() => undefined, onBackgroundError);
  }

  /** A hash this process does not hold: its row, read and marked used in one statement. */
  async function readAndHold(database: Database, hash: string): Promise<Held | undefined> {
    const row = await readAndTouchRow(database, hash);
    if (!row) return undefined;
    const entry = held(hash, row.query, row.source);
    cache.set(hash, entry);
    return entry;
  }

  /**
   * An entry held past `recheckMs`: its row read again (no write), so that one removed elsewhere stops being served.
   * The parsed document and the schema it validated against stay (same hash, same text). While the database is
   * unavailable the entry is served as held, and read again after another `recheckMs`.
   */
  async function recheck(database: Database, entry: Held): Promise<Held | undefined> {
    entry.checkedAt = now();
    let source: PersistedSource | undefined;
    try {
      source = await readSource(database, entry.hash);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      onBackgroundError(error);
      return entry;
    }
    if (source === entry.source) return entry;
    if (source === undefined) {
      cache.delete(entry.hash);
      return undefined;
    }
    const changed: Held = { ...entry, source };
    cache.set(entry.hash, changed);
    return changed;
  }

  async function get(hash: string, { allowlistOnly = false } = {}): Promise<PersistedOperation | undefined> {
    let entry = cache.get(hash) ?? (db ? undefined : memoryOnly.get(hash));
    if (db) {
      if (!entry) entry = await readAndHold(db, hash);
      else if (now() - entry.checkedAt >= recheckMs) entry = await recheck(db, entry);
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
    await insertRegistration(db, hash, query, maxRegistrations);
    if (!cache.has(hash)) cache.set(hash, held(hash, query, 'apq'));
  }

  async function importAllowlist(
    entries: readonly { hash: string; query: string }[],
    version: AppVersion = { app: UNNAMED_APP, version: UNNAMED_VERSION },
  ): Promise<{ added: number; unchanged: number }> {
    if (db) {
      const imported = await importAppVersion(db, entries, version);
      for (const { hash } of entries) cache.delete(hash);
      return imported;
    }
    const added = addToPool(memoryOnly, entries, (hash, query) => held(hash, query, 'allowlist'));
    for (const { hash } of entries) cache.delete(hash);
    return { added, unchanged: entries.length - added };
  }

  async function countBySource(): Promise<Record<PersistedSource, number>> {
    return db ? countRowsBySource(db) : countPool(memoryOnly);
  }

  return { get, register, importAllowlist, count: countBySource };
}
