import { persistedOperationOf } from '@latchkey/persisted';
import { getOperationAST } from 'graphql';
const OTHER = 'other';
/**
 * The labels of one operation. Its name only when the document is an allowlisted one (PERSISTED_ALLOWLIST_FILE or
 * PERSISTED_MODE=allowlist): that text is the server's, so its names are a fixed set. Query text, and APQ
 * registrations (text a client chose), are `other`, whatever they call themselves: every distinct label value is
 * a series kept for the life of the process, so client-chosen names would be a memory leak. The type comes from
 * the operation the document actually runs, never from a request parameter.
 */
function countOperation(count, args) {
    const operation = getOperationAST(args.document, args.operationName);
    if (!operation)
        return count(OTHER, OTHER);
    const trusted = persistedOperationOf(args.contextValue?.params)?.source === 'allowlist';
    count(trusted && operation.name ? operation.name.value : OTHER, operation.operation);
}
/**
 * Counts GraphQL operations (HTTP, SSE and WebSocket) by allowlisted name and type, in the execute and subscribe
 * hooks and nothing else: no per-request state, no timing. (@graphql-yoga/plugin-prometheus did this at first:
 * even with only its counters, its per-request label bookkeeping cost about 6 us per operation, 10% of a small
 * request, against about 0.5 us here; see docs/operations.md, "Metrics and traces".)
 */
export function useOperationMetrics({ count }) {
    return {
        onExecute({ args }) {
            countOperation(count, args);
        },
        onSubscribe({ args }) {
            countOperation(count, args);
        },
    };
}
//# sourceMappingURL=use-operation-metrics.js.map