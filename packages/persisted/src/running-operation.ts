import { requestMemo } from '@latchkey/http';
import type { PersistedOperation } from './store/types.js';

/**
 * Which persisted operation a request runs, by the params object that goes on to parse and execute (one per
 * request, so instances in one process never collide). The Yoga plugin records it when it replaces an id by the
 * operation's text; a transport that resolves ids itself (GraphQL over WebSocket) records it the same way, so
 * the plugin's parse and validation shortcuts, and anything that asks (metrics naming trusted operations),
 * see the same thing on every transport.
 */
const running = requestMemo<PersistedOperation>('persisted operation the request runs');

/** Records that `params` run `operation` (whose text the server holds). */
export function runsPersistedOperation(params: object, operation: PersistedOperation): void {
  running.set(params, operation);
}

/** The persisted operation `params` run, or undefined for query text a client sent. */
export function persistedOperationOf(params: object | undefined): PersistedOperation | undefined {
  return params === undefined ? undefined : running.get(params);
}
