import type { DocumentNode } from 'graphql';
import { splitOperations } from './coordinates.js';
import { parseSource, type SourceFile } from './schema-source.js';

/** Where a known operation comes from. */
export interface OperationOrigin {
  /**
   * `repository`: an operation of this repository's client; `app`: a document of an active app version (imported with
   * `persisted import --app`); `apq`: an automatic persisted query registered by a client.
   */
  readonly source: 'repository' | 'app' | 'apq';
  readonly app?: string;
  readonly version?: string;
  /** the file of a repository operation */
  readonly file?: string;
  /** the document's last use (stored documents; null: not used since it was stored) */
  readonly lastUsedAt?: Date | null;
}

/** One operation a client is known to send, with the fragments of its document. */
export interface KnownOperation extends OperationOrigin {
  /** its name; null for an anonymous operation */
  readonly operation: string | null;
  /** the operation and the fragments it spreads */
  readonly document: DocumentNode;
}

/** Each operation of a document (read from `file`), as a document of its own with the fragments it spreads. */
export function operationsOf(file: SourceFile, origin: OperationOrigin): KnownOperation[] {
  return splitOperations(parseSource(file, 'DOCUMENT_INVALID')).map(({ name, document }) => ({ ...origin, operation: name, document }));
}
