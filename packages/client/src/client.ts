import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
import type { DpopSigner } from './dpop.js';
import { errorFor, NetworkError, type GraphQLErrorShape } from './errors.js';

/**
 * How operations are sent:
 * - `apq` (automatic persisted queries): the hash first (GET for queries, POST for mutations); on
 *   PersistedQueryNotFound the text with its hash (POST), which registers it; from then on the hash alone;
 * - `trusted`: only the document's id from the generated manifest (`documentId=sha256:...`), never text: for
 *   servers that run an allowlist;
 * - `off`: the text, by POST.
 */
export type PersistedMode = 'apq' | 'trusted' | 'off';

/** A generated operation (`StatusDocument`, ...): its text, its types, and its manifest id in `__meta__.hash`. */
export type Operation<TResult, TVariables> = DocumentTypeDecoration<TResult, TVariables> & {
  toString(): string;
  __meta__?: Record<string, unknown>;
};

export interface ClientOptions {
  /** the GraphQL endpoint, e.g. https://api.example.com/graphql */
  url: string;
  /** the bearer token for each request, if any (called per request, so a refreshed token is used at once) */
  getAccessToken?: () => string | null | undefined | Promise<string | null | undefined>;
  /** @default 'apq' */
  persisted?: PersistedMode;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** GET URLs longer than this are sent by POST instead (servers refuse long URLs). @default 8000 */
  maxGetUrlLength?: number;
  /**
   * For tokens bound to a key (DPoP, RFC 9449): the token goes as `Authorization: DPoP <token>` with a fresh proof
   * for each request (`createDpopSigner`). @default none: `Bearer`
   */
  dpop?: DpopSigner;
  /**
   * The app's name, sent as `graphql-client-name` with every request: the name its operations' manifest was imported
   * under (`latchkey persisted import --app NAME`), by which the server tells its uses of the schema from other apps'.
   * @default none
   */
  clientName?: string;
}

/** A GraphQL response: `data` and/or `errors` (spec "Response envelope"). */
export interface ExecutionResult<TResult> {
  data?: TResult | null;
  errors?: GraphQLErrorShape[];
  extensions?: Record<string, unknown>;
}

export interface Client {
  /** The data, or a typed error (StepUpRequiredError, UnauthenticatedError, ForbiddenError, ...) when any error came back. */
  request<TResult, TVariables>(
    operation: Operation<TResult, TVariables>,
    variables?: TVariables,
    init?: { signal?: AbortSignal },
  ): Promise<TResult>;
  /** The whole result, partial data and errors included; throws only when no GraphQL result came back. */
  execute<TResult, TVariables>(
    operation: Operation<TResult, TVariables>,
    variables?: TVariables,
    init?: { signal?: AbortSignal },
  ): Promise<ExecutionResult<TResult> & { status: number }>;
}

const ACCEPT = 'application/graphql-response+json, application/json;q=0.9';
const NOT_FOUND = 'PERSISTED_QUERY_NOT_FOUND';

async function sha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

const OPERATION_KIND = /^\s*(?:#[^\n]*\n\s*)*(query|mutation|subscription)\b/;

/** A small typed client for the generated operations of this package (fetch only; runs in browsers and Node). */
export function createClient(options: ClientOptions): Client {
  const mode = options.persisted ?? 'apq';
  const fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const maxGetUrlLength = options.maxGetUrlLength ?? 8000;
  const hashes = new WeakMap<object, Promise<string>>();

  const hashOf = (operation: { toString(): string }) => {
    let hash = hashes.get(operation);
    if (!hash) hashes.set(operation, (hash = sha256Hex(operation.toString())));
    return hash;
  };

  async function send(method: 'GET' | 'POST', body: Record<string, unknown>, init?: { signal?: AbortSignal }) {
    const headers: Record<string, string> = { accept: ACCEPT };
    const token = await options.getAccessToken?.();
    if (token) headers['authorization'] = `${options.dpop ? 'DPoP' : 'Bearer'} ${token}`;
    if (options.clientName) headers['graphql-client-name'] = options.clientName;
    let url = options.url;
    let payload: string | undefined;
    if (method === 'GET') {
      const search = new URLSearchParams();
      for (const [key, value] of Object.entries(body)) {
        if (value !== undefined) search.set(key, typeof value === 'string' ? value : JSON.stringify(value));
      }
      url = `${options.url}${options.url.includes('?') ? '&' : '?'}${search}`;
      if (url.length > maxGetUrlLength) return send('POST', body, init);
    } else {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    if (token && options.dpop) headers['dpop'] = await options.dpop.proof(method, url, token);
    let response: Response;
    try {
      response = await fetchFn(url, { method, headers, body: payload, signal: init?.signal });
    } catch (error) {
      throw new NetworkError(error instanceof Error ? error.message : 'The request failed.', [], 0);
    }
    let result: ExecutionResult<unknown>;
    try {
      result = (await response.json()) as ExecutionResult<unknown>;
    } catch {
      throw new NetworkError(`The server answered ${response.status} without a GraphQL response.`, [], response.status);
    }
    if (typeof result !== 'object' || result === null || (!('data' in result) && !Array.isArray(result.errors))) {
      throw new NetworkError(`The server answered ${response.status} without a GraphQL response.`, [], response.status);
    }
    return { ...result, status: response.status };
  }

  async function execute<TResult, TVariables>(
    operation: Operation<TResult, TVariables>,
    variables?: TVariables,
    init?: { signal?: AbortSignal },
  ) {
    const text = operation.toString();
    const kind = OPERATION_KIND.exec(text)?.[1] ?? 'query';
    const method = kind === 'query' ? 'GET' : 'POST';
    const vars = variables && Object.keys(variables).length > 0 ? variables : undefined;
    if (mode === 'off')
      return (await send('POST', { query: text, variables: vars }, init)) as ExecutionResult<TResult> & { status: number };
    if (mode === 'trusted') {
      const id = operation.__meta__?.['hash'];
      if (typeof id !== 'string') throw new TypeError('trusted documents need an operation generated with its manifest id (__meta__.hash)');
      return (await send(method, { documentId: id, variables: vars }, init)) as ExecutionResult<TResult> & { status: number };
    }
    const extensions = { persistedQuery: { version: 1, sha256Hash: await hashOf(operation) } };
    const first = await send(method, { variables: vars, extensions }, init);
    if (!first.errors?.some((error) => error.extensions?.code === NOT_FOUND)) return first as ExecutionResult<TResult> & { status: number };
    // Not registered yet (or evicted): the text with its hash registers it.
    return (await send('POST', { query: text, variables: vars, extensions }, init)) as ExecutionResult<TResult> & { status: number };
  }

  return {
    execute,
    async request(operation, variables, init) {
      const result = await execute(operation, variables, init);
      if (result.errors?.length) throw errorFor(result.errors, result.status, result.data);
      return result.data as never;
    },
  };
}
