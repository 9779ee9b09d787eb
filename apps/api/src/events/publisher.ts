import { randomUUID } from 'node:crypto';
import type { DocumentRow } from '@latchkey/db';
import type { DocumentChangeListener } from '../domain/access.js';
import type { DocumentEvent, DocumentEventKind, EventBus } from './types.js';

/**
 * Reports committed document changes to the bus, fire and forget (the change stands whatever happens to the
 * event; a failure goes to `onError`). `flush()` waits for the events under way, for a CLI about to exit.
 */
export function createDocumentPublisher(bus: EventBus, onError: (error: unknown) => void = () => {}): DocumentChangeListener & { flush(): Promise<void> } {
  const pending = new Set<Promise<void>>();
  return {
    documentChanged(kind: DocumentEventKind, document: DocumentRow) {
      const event: DocumentEvent = {
        id: randomUUID(),
        kind,
        documentId: document.id,
        organizationId: document.organizationId,
        ownerId: document.ownerId,
        status: document.status,
        embargoUntil: document.embargoUntil ? document.embargoUntil.toISOString() : null,
        at: Date.now(),
      };
      const sent = bus.publish(event).catch(onError);
      pending.add(sent);
      void sent.finally(() => pending.delete(sent));
    },
    async flush() {
      await Promise.all([...pending]);
    },
  };
}
