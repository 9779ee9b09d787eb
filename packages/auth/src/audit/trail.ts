import { userAgentOf } from '@latchkey/http';
import type { IncomingMessage } from 'node:http';
import type { AuditEvent, AuditTrail, PendingAuditRow } from './events.js';

/** User agents are kept to this many characters. */

export interface AuditTrailOptions {
  /** where rows go (`createAuditWriter`) */
  enqueue(row: PendingAuditRow): void;
  /** the client's address (TRUST_PROXY decides whose forwarded headers count) */
  clientAddress: (req: IncomingMessage) => string;
  /** the request's id (`x-request-id`) */
  requestIdOf: (req: IncomingMessage) => string | undefined;
}

/** The one `AuditTrail` of a process: an event becomes a row with its time, parties and request facts, and is queued. */
export function createAuditTrail({ enqueue, clientAddress, requestIdOf }: AuditTrailOptions): AuditTrail {
  return {
    record(event: AuditEvent): void {
      try {
        const { request } = event;
        enqueue({
          time: new Date(),
          type: event.type,
          actor: event.actor ?? null,
          subject: event.subject ?? null,
          address: request ? clientAddress(request) : null,
          userAgent: request ? userAgentOf(request) : null,
          requestId: event.requestId ?? (request ? requestIdOf(request) : undefined) ?? null,
          details: { ...event.details },
        });
      } catch {
        // Recording never changes what the request does.
      }
    },
  };
}
