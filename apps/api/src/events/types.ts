import type { DocumentEventKind } from '../domain/document-events.js';

/**
 * A change to a document as the outbox row stores it: ids and the few attributes the visibility rule needs when
 * the row is gone (a deleted document is judged on its last state). Never the document's content: every
 * subscriber reads what it may see from the database at delivery time.
 */
export interface StoredDocumentEvent {
  kind: DocumentEventKind;
  documentId: string;
  organizationId: string;
  ownerId: string;
  status: 'DRAFT' | 'PUBLISHED' | 'ARCHIVED';
  embargoUntil: string | null;
}

/** A committed change as the readers hand it to subscribers. */
export interface DocumentEvent extends StoredDocumentEvent {
  /** the outbox sequence number, as text: unique per event (subscribers on one instance share its lookups) */
  id: string;
  /** when the outbox row was written (close to the commit), epoch milliseconds */
  at: number;
}

/**
 * Where the subscription hub gets its events: every committed document event of every instance, once each, in
 * sequence order. `onInterrupted` is told when events were lost to this instance (it could not read them before
 * they were purged): every subscriber may have missed some.
 */
export interface EventSource {
  subscribe(listener: (event: DocumentEvent) => void, onInterrupted: () => void): () => void;
}

const KINDS = new Set<DocumentEventKind>(['CREATED', 'UPDATED', 'PUBLISHED', 'ARCHIVED', 'DELETED', 'LEGAL_HOLD_CHANGED']);
const STATUSES = new Set(['DRAFT', 'PUBLISHED', 'ARCHIVED']);

/** An event read back from the outbox (a row anyone with write access to the table could have written): checked, else undefined. */
export function parseDocumentEvent(text: string): DocumentEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const event = value as Record<string, unknown>;
  const strings = ['id', 'documentId', 'organizationId', 'ownerId'].every(
    (key) => typeof event[key] === 'string' && (event[key] as string).length <= 100,
  );
  if (!strings || !KINDS.has(event['kind'] as DocumentEventKind) || !STATUSES.has(event['status'] as string)) return undefined;
  if (event['embargoUntil'] !== null && typeof event['embargoUntil'] !== 'string') return undefined;
  if (typeof event['at'] !== 'number') return undefined;
  return event as unknown as DocumentEvent;
}
