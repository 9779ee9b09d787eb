import { GraphQLError } from 'graphql';

/**
 * The persisted-operation refusals, kept as data: code -> fixed message, status, and whether the status applies
 * to application/graphql-response+json only (`spec`: a GraphQL-over-HTTP request error; application/json keeps
 * 200) or to both media types.
 *
 * Statuses are chosen so that the ecosystem's clients do the right thing:
 * - PERSISTED_QUERY_NOT_FOUND is 404 under graphql-response+json and 200 under application/json. Apollo
 *   Client's persisted-queries link retries with the query text on either, but treats 400 and 500 as "this
 *   server has no persisted queries" and stops hashing for good; urql's persisted exchange retries on the
 *   error itself whatever the status. The message is the APQ protocol's `PersistedQueryNotFound`, which both
 *   match on.
 * - PERSISTED_QUERY_NOT_SUPPORTED (mode `off`) carries the protocol's `PersistedQueryNotSupported`: both
 *   clients then send full queries from then on.
 */
export const PERSISTED_ERRORS = {
  PERSISTED_QUERY_NOT_FOUND: { message: 'PersistedQueryNotFound', status: 404, spec: true },
  PERSISTED_QUERY_NOT_SUPPORTED: { message: 'PersistedQueryNotSupported', status: 400, spec: true },
  PERSISTED_QUERY_NOT_ALLOWED: {
    message:
      'This server runs only trusted documents: send the id of an operation from its allowlist (documentId or extensions.persistedQuery), not query text.',
    status: 400,
    spec: false,
  },
  PERSISTED_QUERY_MISMATCH: {
    message: 'extensions.persistedQuery.sha256Hash is not the SHA-256 of the query text.',
    status: 400,
    spec: false,
  },
  PERSISTED_QUERY_VERSION: { message: 'extensions.persistedQuery.version must be 1.', status: 400, spec: false },
  PERSISTED_QUERY_MALFORMED: {
    message: 'extensions.persistedQuery must be { "version": 1, "sha256Hash": "<64 hex digits>" } and documentId "sha256:<64 hex digits>".',
    status: 400,
    spec: false,
  },
  PERSISTED_QUERY_AMBIGUOUS: { message: 'Send either documentId or query text, not both.', status: 400, spec: false },
  RATE_LIMITED: {
    message: 'Too many new persisted queries from this client. Retry later, or send the query text without a hash.',
    status: 429,
    spec: true,
  },
} as const;

export type PersistedErrorKind = keyof typeof PERSISTED_ERRORS;

/** The `extensions.code` each refusal leaves with (the malformed variants are plain BAD_REQUEST). */
const CODE: Record<PersistedErrorKind, string> = {
  PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  PERSISTED_QUERY_NOT_SUPPORTED: 'PERSISTED_QUERY_NOT_SUPPORTED',
  PERSISTED_QUERY_NOT_ALLOWED: 'PERSISTED_QUERY_NOT_ALLOWED',
  PERSISTED_QUERY_MISMATCH: 'PERSISTED_QUERY_MISMATCH',
  PERSISTED_QUERY_VERSION: 'BAD_REQUEST',
  PERSISTED_QUERY_MALFORMED: 'BAD_REQUEST',
  PERSISTED_QUERY_AMBIGUOUS: 'BAD_REQUEST',
  RATE_LIMITED: 'RATE_LIMITED',
};

/** A refused persisted-operation request: a request error (no `data`), with its code and HTTP status. */
export function persistedQueryError(kind: PersistedErrorKind, headers?: Record<string, string>): GraphQLError {
  const { message, status, spec } = PERSISTED_ERRORS[kind];
  return new GraphQLError(message, {
    extensions: { code: CODE[kind], http: { status, ...(spec ? { spec: true } : {}), ...(headers ? { headers } : {}) } },
  });
}
