import { readPersistedReference, sha256Hex } from './document-id.js';
import { persistedQueryError } from './errors.js';
import type { PersistedOperation, PersistedOperationStore } from './store/types.js';

/**
 * What the server accepts:
 * - `apq` (automatic persisted queries): any query text; a hash-only request runs a registered operation; the
 *   text and its hash together register it (once the document validates);
 * - `allowlist` (trusted documents): only the ids of operations imported at deploy time; no query text, no
 *   registration at run time;
 * - `off`: query text only; a request naming a persisted operation is told the server has none.
 */
export type PersistedMode = 'apq' | 'allowlist' | 'off';

/** A verdict of a rate limit: go on, or refuse with `Retry-After`. */
export type RegistrationDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** The request parameters this layer reads (`documentId` is the GraphQL-over-HTTP draft's trusted-document id). */
export interface PersistedRequestParams {
  query?: unknown;
  documentId?: unknown;
  extensions?: unknown;
}

/** How a request goes on: as it came (`none`), to be registered after validation, or as a known operation. */
export type PersistedResolution =
  | { kind: 'none' }
  | { kind: 'register'; hash: string; query: string }
  | { kind: 'known'; operation: PersistedOperation };

export interface PersistedRequestResolver {
  readonly mode: PersistedMode;
  /**
   * Judges one request (one entry of a batch). Throws the request error to answer (persistedQueryError) when it
   * must not go on. `allowRegistration` is asked only before a new registration.
   */
  resolve(params: PersistedRequestParams, allowRegistration: () => Promise<RegistrationDecision>): Promise<PersistedResolution>;
  /** Stores an operation whose document has validated (the `register` resolution). */
  register(resolution: { hash: string; query: string }): Promise<void>;
}

const NONE: PersistedResolution = Object.freeze({ kind: 'none' });

/**
 * The rules of spec "Persisted-query extension" and its rows of "States and transitions", independent of the
 * transport (the HTTP plugin and the WebSocket path both use them).
 */
export function createPersistedRequestResolver(mode: PersistedMode, store: PersistedOperationStore): PersistedRequestResolver {
  async function resolve(
    params: PersistedRequestParams,
    allowRegistration: () => Promise<RegistrationDecision>,
  ): Promise<PersistedResolution> {
    const reference = readPersistedReference(params.extensions, params.documentId);
    const hasQuery = params.query !== undefined && params.query !== null;
    if (reference === undefined) {
      if (mode === 'allowlist' && hasQuery) throw persistedQueryError('PERSISTED_QUERY_NOT_ALLOWED');
      return NONE;
    }
    if (mode === 'off') throw persistedQueryError('PERSISTED_QUERY_NOT_SUPPORTED');
    if (reference === 'version') throw persistedQueryError('PERSISTED_QUERY_VERSION');
    if (reference === 'malformed') throw persistedQueryError('PERSISTED_QUERY_MALFORMED');

    if (hasQuery) {
      if (mode === 'allowlist') throw persistedQueryError('PERSISTED_QUERY_NOT_ALLOWED');
      if (reference.kind === 'documentId') throw persistedQueryError('PERSISTED_QUERY_AMBIGUOUS');
      // Malformed query values are the parameter checks' to refuse; nothing registers for them.
      if (typeof params.query !== 'string') return NONE;
      // No hash hijacking: a hash only ever names the text it is the digest of.
      if (sha256Hex(params.query) !== reference.hash) throw persistedQueryError('PERSISTED_QUERY_MISMATCH');
      if (await store.get(reference.hash)) return NONE;
      const decision = await allowRegistration();
      if (!decision.allowed) throw persistedQueryError('RATE_LIMITED', { 'Retry-After': String(decision.retryAfterSeconds) });
      return { kind: 'register', hash: reference.hash, query: params.query };
    }

    const operation = await store.get(reference.hash, { allowlistOnly: mode === 'allowlist' });
    if (!operation) throw persistedQueryError('PERSISTED_QUERY_NOT_FOUND');
    return { kind: 'known', operation };
  }

  return {
    mode,
    resolve,
    register: ({ hash, query }) => store.register(hash, query),
  };
}
