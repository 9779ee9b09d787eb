import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from './document-id.js';
import type { RegistrationDecision } from './resolve-request.js';
import { createPersistedStore } from './store/persisted-store.js';
import type { PersistedOperationStore } from './store/types.js';
import { usePersistedOperations } from './use-persisted-operations.js';

const schema = createSchema({
  typeDefs: 'type Query { hello(name: String): String } type Mutation { bump: Int }',
  resolvers: { Query: { hello: (_: unknown, { name }: { name?: string }) => `hello ${name ?? 'world'}` }, Mutation: { bump: () => 1 } },
});

/** Counts parse and validate calls that really ran (after every plugin had its say). */
function counting() {
  const counts = { parse: 0, validate: 0 };
  const plugin: Plugin = {
    onParse: ({ parseFn, setParseFn }) =>
      setParseFn((...args: Parameters<typeof parseFn>) => {
        counts.parse++;
        return parseFn(...args);
      }),
    onValidate: ({ validateFn, setValidationFn }) =>
      setValidationFn((...args: Parameters<typeof validateFn>) => {
        counts.validate++;
        return validateFn(...args);
      }),
  };
  return { counts, plugin };
}

function server(
  mode: 'apq' | 'allowlist' | 'off',
  options: { store?: PersistedOperationStore; allow?: () => Promise<RegistrationDecision>; after?: Plugin } = {},
) {
  const store = options.store ?? createPersistedStore();
  const { counts, plugin } = counting();
  const yoga = createYoga({
    schema,
    // The parse/validation caches would hide what the plugin skips: off, to count real work.
    parserAndValidationCache: false,
    batching: true,
    plugins: [usePersistedOperations({ mode, store, allowRegistration: options.allow }), plugin, ...(options.after ? [options.after] : [])],
  });
  const post = async (body: unknown, accept = 'application/graphql-response+json') => {
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, json: (await response.json()) as any };
  };
  const get = async (params: Record<string, unknown>) => {
    const search = new URLSearchParams(
      Object.entries(params).map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)]),
    );
    const response = await yoga.fetch(`http://yoga/graphql?${search}`, { headers: { accept: 'application/graphql-response+json' } });
    return { status: response.status, json: (await response.json()) as any };
  };
  return { store, counts, post, get };
}

const query = '{ hello }';
const hash = sha256Hex(query);
const apq = (sha256Hash = hash, version: unknown = 1) => ({ persistedQuery: { version, sha256Hash } });

describe('automatic persisted queries (spec "States and transitions": hash unknown / hash known)', () => {
  it('hash alone, unknown: PersistedQueryNotFound (404 under graphql-response+json, 200 under json); the retry with query registers; then the hash alone runs, by POST and GET', async () => {
    const { post, get, store } = server('apq');
    const missing = await post({ extensions: apq() });
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] });
    expect((await post({ extensions: apq() }, 'application/json')).status).toBe(200);

    const registered = await post({ query, extensions: apq() });
    expect(registered).toMatchObject({ status: 200, json: { data: { hello: 'hello world' } } });
    expect(await store.get(hash)).toMatchObject({ query, source: 'apq' });
    expect(await post({ extensions: apq(), variables: {} })).toMatchObject({ status: 200, json: { data: { hello: 'hello world' } } });
    expect(await get({ extensions: apq() })).toMatchObject({ status: 200, json: { data: { hello: 'hello world' } } });
    // Upper-case hex names the same operation.
    expect(await post({ extensions: apq(hash.toUpperCase()) })).toMatchObject({ status: 200 });
  });

  it('a known operation skips parsing and validation; its variables and operation name still apply', async () => {
    const text = 'query Greet($name: String) { hello(name: $name) }';
    const { post, counts } = server('apq');
    await post({ query: text, extensions: apq(sha256Hex(text)) });
    expect(counts).toEqual({ parse: 1, validate: 1 });
    const again = await post({ extensions: apq(sha256Hex(text)), variables: { name: 'ada' }, operationName: 'Greet' });
    expect(again.json).toEqual({ data: { hello: 'hello ada' } });
    // First hash-only use parses once (the text came from the store), validation is remembered from then on.
    await post({ extensions: apq(sha256Hex(text)), variables: { name: 'bob' } });
    await post({ extensions: apq(sha256Hex(text)), variables: { name: 'eve' } });
    expect(counts.parse).toBeLessThanOrEqual(2);
    expect(counts.validate).toBeLessThanOrEqual(2);
    // Bad variables are still refused per request.
    expect((await post({ extensions: apq(sha256Hex(text)), variables: { name: 42 } })).status).toBe(400);
  });

  it("no hash hijacking: query text under another text's hash is 400 PERSISTED_QUERY_MISMATCH and registers nothing", async () => {
    const { post, store } = server('apq');
    const other = sha256Hex('{ __typename }');
    const refused = await post({ query, extensions: apq(other) });
    expect(refused.status).toBe(400);
    expect(refused.json.errors[0].extensions).toEqual({ code: 'PERSISTED_QUERY_MISMATCH' });
    expect(await store.get(other)).toBeUndefined();
    expect((await post({ query, extensions: apq(other) }, 'application/json')).status).toBe(400);
  });

  it('only a document that parses and validates registers', async () => {
    const { post, store } = server('apq');
    for (const text of ['{ hello', '{ nope }']) {
      const answer = await post({ query: text, extensions: apq(sha256Hex(text)) });
      expect(answer.status).toBe(400);
      expect(await store.get(sha256Hex(text))).toBeUndefined();
    }
  });

  it.each([
    ['version 2', apq(hash, 2), 'BAD_REQUEST', 'version must be 1'],
    ['a missing version', { persistedQuery: { sha256Hash: hash } }, 'BAD_REQUEST', 'version must be 1'],
    ['a short hash', apq('abc'), 'BAD_REQUEST', '64 hex digits'],
    ['a non-object', { persistedQuery: 'x' }, 'BAD_REQUEST', '64 hex digits'],
  ])('%s is refused with 400', async (_name, extensions, code, message) => {
    const { post } = server('apq');
    const answer = await post({ query, extensions });
    expect(answer.status).toBe(400);
    expect(answer.json.errors[0].extensions.code).toBe(code);
    expect(answer.json.errors[0].message).toContain(message);
  });

  it("registrations over the client's budget: 429 RATE_LIMITED with Retry-After, nothing stored; known hashes and plain text are not counted", async () => {
    let budget = 1;
    const { post, store } = server('apq', {
      allow: async () => (budget-- > 0 ? { allowed: true } : { allowed: false, retryAfterSeconds: 30 }),
    });
    await post({ query, extensions: apq() });
    await post({ query, extensions: apq() });
    const text = '{ a: hello }';
    const refused = await post({ query: text, extensions: apq(sha256Hex(text)) });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(refused.json.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(await store.get(sha256Hex(text))).toBeUndefined();
    expect((await post({ query: text })).json).toEqual({ data: { a: 'hello world' } });
  });

  it('the GET-mutation guard still applies to a known mutation', async () => {
    const mutation = 'mutation { bump }';
    const { post, get } = server('apq');
    await post({ query: mutation, extensions: apq(sha256Hex(mutation)) });
    const viaGet = await get({ extensions: apq(sha256Hex(mutation)) });
    expect(viaGet.status).toBe(405);
    expect((await post({ extensions: apq(sha256Hex(mutation)) })).json).toEqual({ data: { bump: 1 } });
  });
});

describe('trusted documents (mode allowlist: spec "hash not on allowlist" row)', () => {
  it('runs allowlisted ids given as extensions.persistedQuery or documentId (POST and GET); query text is PERSISTED_QUERY_NOT_ALLOWED; unknown ids PERSISTED_QUERY_NOT_FOUND; nothing registers', async () => {
    const store = createPersistedStore();
    await store.importAllowlist([{ hash, query }]);
    const { post, get } = server('allowlist', { store });
    expect((await post({ extensions: apq() })).json).toEqual({ data: { hello: 'hello world' } });
    expect((await post({ documentId: `sha256:${hash}` })).json).toEqual({ data: { hello: 'hello world' } });
    expect((await get({ documentId: `sha256:${hash}` })).json).toEqual({ data: { hello: 'hello world' } });

    const text = await post({ query: '{ __typename }' });
    expect(text.status).toBe(400);
    expect(text.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
    const withHash = await post({ query: '{ __typename }', extensions: apq(sha256Hex('{ __typename }')) });
    expect(withHash.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
    expect(await store.get(sha256Hex('{ __typename }'))).toBeUndefined();

    const unknown = await post({ documentId: `sha256:${'0'.repeat(64)}` });
    expect(unknown.status).toBe(404);
    expect(unknown.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await post({ documentId: 'md5:abc' })).status).toBe(400);
    expect((await post({ documentId: `sha256:${hash}`, query })).json.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
  });

  it('an operation registered by APQ earlier is not on the allowlist', async () => {
    const store = createPersistedStore();
    await store.register(hash, query);
    const { post } = server('allowlist', { store });
    expect((await post({ extensions: apq() })).json.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});

describe('what the id look-up hands on', () => {
  it("an id is replaced by its operation's text and nothing else: other parameters stay for the parameter checks", async () => {
    const seen: Record<string, unknown>[] = [];
    const { post } = server('apq', { after: { onParams: ({ params }) => void seen.push({ ...params }) } });
    await post({ query, extensions: apq() });
    seen.length = 0;
    await post({ documentId: `sha256:${hash}`, operationName: null, stray: 1 });
    expect(seen).toEqual([{ query, operationName: null, stray: 1 }]);
  });

  it('each entry of a batch is looked up on its own; an unknown id refuses its entry only', async () => {
    const store = createPersistedStore();
    await store.importAllowlist([{ hash, query }]);
    const { post } = server('allowlist', { store });
    const answer = await post(
      [{ documentId: `sha256:${hash}` }, { extensions: apq('0'.repeat(64)) }, { extensions: apq() }],
      'application/json',
    );
    expect(answer.json).toEqual([
      { data: { hello: 'hello world' } },
      { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] },
      { data: { hello: 'hello world' } },
    ]);
  });

  it('in allowlist mode, query text that is present but empty is still text: refused, never looked up', async () => {
    const store = createPersistedStore();
    await store.importAllowlist([{ hash, query }]);
    const { post } = server('allowlist', { store });
    for (const body of [{ query: '' }, { query: '', documentId: `sha256:${hash}` }, { query: false, extensions: apq() }]) {
      const answer = await post(body);
      expect(answer.status).toBe(400);
      expect(answer.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
    }
  });
});

describe('mode off', () => {
  it('query text runs; a persisted reference is told PersistedQueryNotSupported (clients then send text)', async () => {
    const { post } = server('off');
    expect((await post({ query })).json).toEqual({ data: { hello: 'hello world' } });
    const answer = await post({ query, extensions: apq() });
    expect(answer.status).toBe(400);
    expect(answer.json.errors[0]).toMatchObject({
      message: 'PersistedQueryNotSupported',
      extensions: { code: 'PERSISTED_QUERY_NOT_SUPPORTED' },
    });
  });
});
