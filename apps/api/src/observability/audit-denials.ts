import type { AuditTrail } from '@latchkey/auth';
import { requestMemo } from '@latchkey/http';
import { onDenied, type DenialEvent } from '@latchkey/policy';
import type { RequestScope } from '../domain/request-scope.js';

/** Denials at the root of an operation or at an entry point; any other `Type.field` is a field of a returned record. */
const FIELD_HANDLER = /^(?!Query\.|Mutation\.|Subscription\.)([A-Z][A-Za-z0-9_]*)\.[A-Za-z0-9_]+$/;

export interface DenialAuditOptions {
  audit: AuditTrail;
  /** the request key a subject was read for (this instance's subject loader): the GraphQL context, or the REST request */
  scopeOf: (subject: object) => RequestScope | undefined;
}

/** The HTTP request and request id of a request scope, as the audit trail takes them. */
const requestOf = ({ req, requestId }: RequestScope) => ({
  ...(req ? { request: req } : {}),
  ...(requestId !== '' ? { requestId } : {}),
});

/** The record a denial was about: its type and id only, never the arguments themselves. */
function recordOf(event: DenialEvent, fieldType: string | undefined): { recordType: string | null; recordId: string | null } {
  const [first] = event.args;
  const id = first !== null && typeof first === 'object' ? (first as { id?: unknown }).id : undefined;
  const recordId = typeof id === 'string' ? id : null;
  return { recordType: fieldType ?? (recordId !== null ? event.policy.replace(/Policy$/, '') : null), recordId };
}

/**
 * Policy denials of this instance's signed-in callers as `policy.denied` events. Only denials happen here: an
 * allowed request never reaches this listener, and a subject's request key is remembered as it is read. Field-level
 * denials (a field of each returned record) are recorded once per request and ability. A guest's refusals
 * (`unauthenticated`) name no account and no request and are not recorded. Returns the unsubscribe function.
 */
export function auditDenials({ audit, scopeOf }: DenialAuditOptions): () => void {
  const fieldDenials = requestMemo<Set<string>>('field denials recorded for the request');
  return onDenied((event) => {
    const subject = event.user as { id?: unknown } | null;
    const scope = subject ? scopeOf(subject) : undefined;
    if (!scope || typeof subject?.id !== 'string') return;
    const fieldType = FIELD_HANDLER.exec(event.handler)?.[1];
    if (fieldType !== undefined) {
      const key = `${event.policy}.${event.ability}`;
      const seen = fieldDenials.get(scope) ?? fieldDenials.set(scope, new Set());
      if (seen.has(key)) return;
      seen.add(key);
    }
    audit.record({
      type: 'policy.denied',
      details: {
        policy: event.policy,
        ability: event.ability,
        reason: event.reason,
        ...recordOf(event, fieldType),
        ...(fieldType !== undefined ? { aggregated: true as const } : {}),
      },
      actor: subject.id,
      ...requestOf(scope),
    });
  });
}
