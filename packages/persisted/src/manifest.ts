import { parse, specifiedRules, validate, type GraphQLSchema, type ValidationRule } from 'graphql';
import { CodedError } from '@latchkey/errors';
import { sha256Hex } from './document-id.js';

/** One trusted document: its hash (lower-case hex, no prefix) and its exact text. */
export interface ManifestEntry {
  hash: string;
  query: string;
}

/** A manifest that cannot be used (code MANIFEST_INVALID), with every reason (each names the entry). */
export class ManifestError extends CodedError<'MANIFEST_INVALID'> {
  constructor(readonly problems: readonly string[]) {
    super('ManifestError', 'MANIFEST_INVALID', `the persisted-documents manifest cannot be used:\n  ${problems.join('\n  ')}`);
  }
}

const ID = /^(?:sha256:)?([0-9a-fA-F]{64})$/;
const MAX_ENTRIES = 100_000;

/**
 * Reads a persisted-documents manifest: the GraphQL Code Generator client preset's `persisted-documents.json`
 * (`{ "sha256:<hex>": "<document>" }`, the prefix optional), or Apollo's persisted-query manifest
 * (`{ "format": "apollo-persisted-query-manifest", "version": 1, "operations": [{ "id", "body" }] }`). Every id
 * must be the SHA-256 of its text: a manifest cannot smuggle a document in under another document's id.
 */
export function parseManifest(text: string): ManifestEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ManifestError(['not valid JSON']);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ManifestError(['must be a JSON object']);
  const record = json as Record<string, unknown>;
  let pairs: [string, unknown][];
  if (record['format'] === 'apollo-persisted-query-manifest') {
    if (record['version'] !== 1 || !Array.isArray(record['operations']))
      throw new ManifestError(['an Apollo manifest needs "version": 1 and an "operations" array']);
    pairs = (record['operations'] as unknown[]).map((operation, index) => {
      const { id, body } = (typeof operation === 'object' && operation !== null ? operation : {}) as Record<string, unknown>;
      return [typeof id === 'string' ? id : `operations[${index}]`, body];
    });
  } else {
    pairs = Object.entries(record);
  }
  if (pairs.length === 0) throw new ManifestError(['has no documents']);
  if (pairs.length > MAX_ENTRIES) throw new ManifestError([`has ${pairs.length} documents, more than ${MAX_ENTRIES}`]);
  const problems: string[] = [];
  const entries: ManifestEntry[] = [];
  const seen = new Set<string>();
  for (const [id, query] of pairs) {
    const shown = id.slice(0, 80);
    const match = ID.exec(id);
    if (!match) {
      problems.push(`${shown}: the id must be "sha256:" and 64 hex digits`);
      continue;
    }
    if (typeof query !== 'string' || query.trim() === '') {
      problems.push(`${shown}: the document must be a non-empty string`);
      continue;
    }
    const hash = match[1]!.toLowerCase();
    if (sha256Hex(query) !== hash) {
      problems.push(`${shown}: the id is not the SHA-256 of its document`);
      continue;
    }
    if (seen.has(hash)) continue;
    seen.add(hash);
    entries.push({ hash, query });
  }
  if (problems.length > 0) throw new ManifestError(problems);
  return entries;
}

/**
 * Checks every document against the schema the server runs (and any extra rules, such as its depth limit), so
 * an allowlist never holds an operation that could not execute. Returns the problems, each naming the entry.
 */
export function checkManifestAgainstSchema(
  schema: GraphQLSchema,
  entries: readonly ManifestEntry[],
  extraRules: readonly ValidationRule[] = [],
): string[] {
  const problems: string[] = [];
  const rules = [...specifiedRules, ...extraRules];
  for (const { hash, query } of entries) {
    try {
      const errors = validate(schema, parse(query), rules);
      for (const error of errors.slice(0, 3)) problems.push(`sha256:${hash.slice(0, 12)}…: ${error.message}`);
    } catch (error) {
      problems.push(`sha256:${hash.slice(0, 12)}…: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return problems;
}
