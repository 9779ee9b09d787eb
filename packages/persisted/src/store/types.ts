import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { AppVersion } from './app-versions.js';

/** How a persisted operation got into the store. */
export type PersistedSource = 'apq' | 'allowlist';

/**
 * One persisted operation as this process holds it. `document` and `validatedFor` are this process's own
 * memo (the parsed document, and the schema it passed validation against): a known id skips parsing, and
 * validation as long as the schema is the same object.
 */
export interface PersistedOperation {
  readonly hash: string;
  readonly query: string;
  readonly source: PersistedSource;
  document?: DocumentNode;
  validatedFor?: GraphQLSchema;
}

export interface PersistedOperationStore {
  /** The operation of `hash`; with `allowlistOnly`, only one imported from an allowlist. */
  get(hash: string, options?: { allowlistOnly?: boolean }): Promise<PersistedOperation | undefined>;
  /**
   * Registers an APQ operation (the caller has checked that `hash` is the SHA-256 of `query` and that the
   * document is valid). Registering a known hash changes nothing. May evict the least recently used APQ rows
   * beyond the store's cap; allowlist rows are never evicted.
   */
  register(hash: string, query: string): Promise<void>;
  /**
   * Adds allowlist entries (deploy time) as the documents of an app version (default: the app `unnamed`, whose one
   * version each import adds to); an APQ row of the same hash becomes an allowlist row. An app version's documents
   * never change: another set under a known version is refused (AppVersionError). A store without a database
   * records no app versions.
   */
  importAllowlist(entries: readonly { hash: string; query: string }[], version?: AppVersion): Promise<{ added: number; unchanged: number }>;
  /** How many operations the backing store holds, by source. */
  count(): Promise<Record<PersistedSource, number>>;
}
