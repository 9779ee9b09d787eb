import type { Database, DocumentRow } from '@latchkey/db';

/** What happened to a document. */
export type DocumentEventKind = 'CREATED' | 'UPDATED' | 'PUBLISHED' | 'ARCHIVED' | 'DELETED' | 'LEGAL_HOLD_CHANGED';

/**
 * Where domain services report document changes (subscriptions). `record` runs inside the change's transaction,
 * after its write, so the event commits or rolls back with the change; `committed` runs once it has committed.
 * The events layer implements it (the outbox).
 */
export interface DocumentEventRecorder {
  record(tx: Database, kind: DocumentEventKind, document: DocumentRow): Promise<void>;
  committed(): void;
}
