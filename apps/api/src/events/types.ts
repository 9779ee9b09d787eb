/** What happened to a document. */
export type DocumentEventKind = 'CREATED' | 'UPDATED' | 'PUBLISHED' | 'ARCHIVED' | 'DELETED' | 'LEGAL_HOLD_CHANGED';

/**
 * A change to a document, as it travels between instances: ids and the few attributes the visibility rule
 * needs when the row is gone (a deleted document is judged on its last state). Never the document's content:
 * every subscriber reads what it may see from the database at delivery time.
 */
export interface DocumentEvent {
  /** unique per event (subscribers on one instance share the lookups of one event) */
  id: string;
  kind: DocumentEventKind;
  documentId: string;
  organizationId: string;
  ownerId: string;
  status: 'DRAFT' | 'PUBLISHED' | 'ARCHIVED';
  embargoUntil: string | null;
  /** epoch milliseconds */
  at: number;
}

/** Carries document events to every instance of the service (this one included). */
export interface EventBus {
  readonly kind: 'memory' | 'postgres' | 'redis';
  publish(event: DocumentEvent): Promise<void>;
  /** Every event from every instance, in publication order per instance; returns the unsubscribe function. */
  subscribe(listener: (event: DocumentEvent) => void): () => void;
  close(): Promise<void>;
}

const KINDS = new Set<DocumentEventKind>(['CREATED', 'UPDATED', 'PUBLISHED', 'ARCHIVED', 'DELETED', 'LEGAL_HOLD_CHANGED']);
const STATUSES = new Set(['DRAFT', 'PUBLISHED', 'ARCHIVED']);

/** An event read off the wire (another instance's, or anyone's who can publish there): checked, else undefined. */
export function parseDocumentEvent(text: string): DocumentEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const event = value as Record<string, unknown>;
  const strings = ['id', 'documentId', 'organizationId', 'ownerId'].every((key) => typeof event[key] === 'string' && (event[key] as string).length <= 100);
  if (!strings || !KINDS.has(event['kind'] as DocumentEventKind) || !STATUSES.has(event['status'] as string)) return undefined;
  if (event['embargoUntil'] !== null && typeof event['embargoUntil'] !== 'string') return undefined;
  if (typeof event['at'] !== 'number') return undefined;
  return event as unknown as DocumentEvent;
}
