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

/**
 * What a request asks of this layer, read from its parameters alone (nothing looked up yet):
 * - `text`: query text naming no persisted operation, or nothing at all (the parameter checks judge it);
 * - `id`: an operation named by its id alone, to look up (in `allowlist` mode, among the allowlist only);
 * - `text-refused`: query text in `allowlist` mode;
 * - `text-with-hash`: APQ text with its own hash, registered once it validates unless already known.
 */
export type PersistedRequest =
  | { kind: 'text' }
  | { kind: 'id'; hash: string }
  | { kind: 'text-refused' }
  | { kind: 'text-with-hash'; hash: string; query: string };

/** How a request goes on: as it came (`none`), to be registered after validation, or as a known operation. */
export type PersistedResolution =
  | { kind: 'none' }
  | { kind: 'register'; hash: string; query: string }
  | { kind: 'known'; operation: PersistedOperation };

export interface PersistedRequestResolver {
  readonly mode: PersistedMode;
  /**
   * Reads one request (one entry of a batch) without looking anything up. Throws the request error to answer
   * (persistedQueryError) for what its parameters alone refuse: a reference in mode `off`, a wrong version, a
   * malformed id, `documentId` with text, text under another text's hash.
   */
  classify(params: PersistedRequestParams): PersistedRequest;
  /**
   * Admits APQ text with its hash: `none` when the hash is known already, else `register` once
   * `allowRegistration` agrees (it is asked only then); throws RATE_LIMITED when it does not.
   */
  admit(request: { hash: string; query: string }, allowRegistration: () => Promise<RegistrationDecision>): Promise<PersistedResolution>;
  /**
   * Judges one request whole: `classify`, then the look-up of an id or the admission of a registration. Throws
   * the request error to answer (persistedQueryError) when it must not go on.
   */
  resolve(params: PersistedRequestParams, allowRegistration: () => Promise<RegistrationDecision>): Promise<PersistedResolution>;
  /** Stores an operation whose document has validated (the `register` resolution). */
  register(resolution: { hash: string; query: string }): Promise<void>;
}

const NONE: PersistedResolution = Object.freeze({ kind: 'none' });
const TEXT: PersistedRequest = Object.freeze({ kind: 'text' });
const TEXT_REFUSED: PersistedRequest = Object.freeze({ kind: 'text-refused' });

/**
 * The rules of spec "Persisted-query extension" and its rows of "States and transitions", independent of the
 * transport. The HTTP plugin uses `classify` and `admit`, and leaves looking ids up to
 * @graphql-yoga/plugin-persisted-operations (use-persisted-lookup.ts); the WebSocket path uses `resolve`.
 */
export function createPersistedRequestResolver(mode: PersistedMode, store: PersistedOperationStore): PersistedRequestResolver {
  function classify(params: PersistedRequestParams): PersistedRequest {
    const reference = readPersistedReference(params.extensions, params.documentId);
    const hasQuery = params.query !== undefined && params.query !== null;
    if (reference === undefined) return mode === 'allowlist' && hasQuery ? TEXT_REFUSED : TEXT;
    if (mode === 'off') throw persistedQueryError('PERSISTED_QUERY_NOT_SUPPORTED');
    if (reference === 'version') throw persistedQueryError('PERSISTED_QUERY_VERSION');
    if (reference === 'malformed') throw persistedQueryError('PERSISTED_QUERY_MALFORMED');
    if (!hasQuery) return { kind: 'id', hash: reference.hash };
    if (mode === 'allowlist') return TEXT_REFUSED;
    if (reference.kind === 'documentId') throw persistedQueryError('PERSISTED_QUERY_AMBIGUOUS');
    // Malformed query values are the parameter checks' to refuse; nothing registers for them.
    if (typeof params.query !== 'string') return TEXT;
    // No hash hijacking: a hash only ever names the text it is the digest of.
    if (sha256Hex(params.query) !== reference.hash) throw persistedQueryError('PERSISTED_QUERY_MISMATCH');
    return { kind: 'text-with-hash', hash: reference.hash, query: params.query };
  }

  async function admit(
    { hash, query }: { hash: string; query: string },
    allowRegistration: () => Promise<RegistrationDecision>,
  ): Promise<PersistedResolution> {
    if (await store.get(hash)) return NONE;
    const decision = await allowRegistration();
    if (!decision.allowed) throw persistedQueryError('RATE_LIMITED', { 'Retry-After': String(decision.retryAfterSeconds) });
    return { kind: 'register', hash, query };
  }

  async function resolve(
    params: PersistedRequestParams,
    allowRegistration: () => Promise<RegistrationDecision>,
  ): Promise<PersistedResolution> {
    const request = classify(params);
    switch (request.kind) {
      case 'text':
        return NONE;
      case 'text-refused':
        throw persistedQueryError('PERSISTED_QUERY_NOT_ALLOWED');
      case 'text-with-hash':
        return admit(request, allowRegistration);
      case 'id': {
        const operation = await store.get(request.hash, { allowlistOnly: mode === 'allowlist' });
        if (!operation) throw persistedQueryError('PERSISTED_QUERY_NOT_FOUND');
        return { kind: 'known', operation };
      }
    }
  }

  return {
    mode,
    classify,
    admit,
    resolve,
    register: ({ hash, query }) => store.register(hash, query),
  };
}
