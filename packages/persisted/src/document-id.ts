import { createHash } from 'node:crypto';

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const DOCUMENT_ID = /^sha256:([0-9a-fA-F]{64})$/;

/** The SHA-256 of a document's text, as 64 lower-case hex digits (the APQ and trusted-documents id). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Where a request named its persisted operation, and the hash it named (lower-case hex). */
export type PersistedReference = { kind: 'apq'; hash: string } | { kind: 'documentId'; hash: string };

/** Why a request's reference cannot be read. */
export type ReferenceProblem = 'malformed' | 'version';

/**
 * Reads the persisted-operation reference of a request: `extensions.persistedQuery` (APQ: `{ version: 1,
 * sha256Hash }`) or `documentId` (the GraphQL-over-HTTP draft's `sha256:<hex>`). `undefined`: the request names
 * none. Hex digits are accepted in either case and compared in lower case.
 */
export function readPersistedReference(extensions: unknown, documentId: unknown): PersistedReference | ReferenceProblem | undefined {
  if (documentId !== undefined && documentId !== null) {
    if (typeof documentId !== 'string') return 'malformed';
    const match = DOCUMENT_ID.exec(documentId);
    return match ? { kind: 'documentId', hash: match[1]!.toLowerCase() } : 'malformed';
  }
  if (typeof extensions !== 'object' || extensions === null || Array.isArray(extensions)) return undefined;
  const persisted = (extensions as Record<string, unknown>)['persistedQuery'];
  if (persisted === undefined || persisted === null) return undefined;
  if (typeof persisted !== 'object' || Array.isArray(persisted)) return 'malformed';
  const { version, sha256Hash } = persisted as Record<string, unknown>;
  if (version !== 1) return 'version';
  if (typeof sha256Hash !== 'string' || !SHA256_HEX.test(sha256Hash)) return 'malformed';
  return { kind: 'apq', hash: sha256Hash.toLowerCase() };
}

/** The trusted-documents id of a hash: `sha256:<hex>`. */
export const documentIdOf = (hash: string): string => `sha256:${hash}`;
