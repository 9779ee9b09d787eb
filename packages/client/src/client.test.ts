import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createPersistedStore, parseManifest, usePersistedOperations } from '@latchkey/persisted';
import { GraphQLError } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { createClient, type PersistedMode } from './client.js';
import { ForbiddenError, GraphQLRequestError, NetworkError, StepUpRequiredError, UnauthenticatedError } from './errors.js';
import { DocumentsDocument, RenamePasskeyDocument, SetLegalHoldDocument, StatusDocument } from './generated/graphql.js';

// A real GraphQL server (Yoga, driven through yoga.fetch) on the schema the operations were generated from, with
// the persisted-operations plugin the API uses; its resolvers answer as the API would, errors included.
const SCHEMA_DIR = fileURLToPath(new URL('../../../schema/', import.meta.url));
const typeDefs = readdirSync(SCHEMA_DIR)
  .filter((name) => name.endsWith('.graphql'))
  .map((name) => readFileSync(SCHEMA_DIR + name, 'utf8'));
const MANIFEST = readFileSync(fileURLToPath(new URL('./generated/persisted-documents.json', import.meta.url)), 'utf8');

const coded = (message: string, code: string, extensions: Record<string, unknown> = {}) =>
  new GraphQLError(message, { extensions: { code, ...extensions } });

async function server(mode: 'apq' | 'allowlist' | 'off') {
  const store = createPersistedStore();
  if (mode === 'allowlist') await store.importAllowlist(parseManifest(MANIFEST));
  const yoga = createYoga<{ authorization?: string }>({
    schema: createSchema({
      typeDefs,
      resolvers: {
        Query: {
          status: () => ({ service: 'test', version: '1', serverTime: '2026-01-01T00:00:00.000Z' }),
          documents: (_root: unknown, _args: unknown, context: { request: Request }) => {
            if (!context.request.headers.get('authorization')) throw coded('Sign in to perform this operation.', 'UNAUTHENTICATED');
            return {
              edges: [
                {
                  node: {
                    id: 'd1',
                    title: 'One',
                    status: 'PUBLISHED',
                    legalHold: false,
                    organization: { slug: 'acme' },
                    viewerCan: { setLegalHold: true },
                  },
                },
              ],
              pageInfo: { hasNextPage: false, endCursor: null },
            };
          },
        },
        Mutation: {
          setLegalHold: () => {
            throw coded('A different authentication level is required.', 'INSUFFICIENT_USER_AUTHENTICATION', {
              acr_values: 'urn:latchkey:acr:phr',
              max_age: 300,
            });
          },
          renamePasskey: () => {
            throw coded('You are not allowed to perform this operation.', 'FORBIDDEN');
          },
        },
      },
    }),
    plugins: [usePersistedOperations({ mode, store })],
    logging: false,
  });
  const wire: { method: string; url: string; headers: Headers; body: Record<string, unknown> }[] = [];
  const fetchFn: typeof fetch = async (input, init) => {
    const url = String(input);
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : {};
    wire.push({ method: init?.method ?? 'GET', url, headers: new Headers(init?.headers), body });
    return yoga.fetch(new Request(url, init));
  };
  const client = (persisted: PersistedMode, token?: string, maxGetUrlLength?: number, clientName?: string) =>
    createClient({ url: 'http://api.test/graphql', persisted, fetch: fetchFn, getAccessToken: () => token, maxGetUrlLength, clientName });
  return { client, wire };
}

describe('createClient (packages/client): how operations go over the wire', () => {
  it('apq: a query goes hash-first by GET; PersistedQueryNotFound -> the text with its hash by POST (registers); then the hash alone', async () => {
    const { client, wire } = await server('apq');
    const apq = client('apq');
    expect((await apq.request(StatusDocument)).status.service).toBe('test');
    expect(wire.map(({ method, url, body }) => [method, url.includes('sha256Hash'), typeof body['query'] === 'string'])).toEqual([
      ['GET', true, false],
      ['POST', false, true],
    ]);
    await apq.request(StatusDocument);
    expect(wire[2]).toMatchObject({ method: 'GET' });
    expect(wire[2]!.url).not.toContain('query=');
  });

  it('apq: a mutation goes by POST, hash first, then with its text', async () => {
    const { client, wire } = await server('apq');
    await expect(client('apq', 'token').request(RenamePasskeyDocument, { id: 'p1', label: 'x' })).rejects.toBeInstanceOf(ForbiddenError);
    expect(wire.map(({ method, body }) => [method, typeof body['query'] === 'string'])).toEqual([
      ['POST', false],
      ['POST', true],
    ]);
  });

  it('trusted: only the manifest id (documentId=sha256:...), GET for queries and POST for mutations, never text', async () => {
    const { client, wire } = await server('allowlist');
    const trusted = client('trusted', 'token');
    expect((await trusted.request(DocumentsDocument, { first: 1 })).documents.edges[0]!.node.title).toBe('One');
    await expect(trusted.request(SetLegalHoldDocument, { id: 'd1', legalHold: true })).rejects.toBeInstanceOf(StepUpRequiredError);
    expect(
      wire.map(({ method, url, body }) => [
        method,
        url.includes('documentId=sha256%3A') || String(body['documentId']).startsWith('sha256:'),
        'query' in body,
      ]),
    ).toEqual([
      ['GET', true, false],
      ['POST', true, false],
    ]);
  });

  it('off: the text by POST', async () => {
    const { client, wire } = await server('off');
    await client('off').request(StatusDocument);
    expect(wire).toEqual([
      expect.objectContaining({ method: 'POST', body: expect.objectContaining({ query: expect.stringContaining('query Status') }) }),
    ]);
  });

  it('clientName goes as the graphql-client-name header with every request, GET and POST alike; without it, none', async () => {
    const { client, wire } = await server('apq');
    await client('apq', undefined, undefined, 'outside-app').request(StatusDocument);
    expect(wire.map(({ method, headers }) => [method, headers.get('graphql-client-name')])).toEqual([
      ['GET', 'outside-app'],
      ['POST', 'outside-app'],
    ]);
    await client('apq').request(StatusDocument);
    expect(wire[2]!.headers.has('graphql-client-name')).toBe(false);
  });

  it('a GET longer than maxGetUrlLength goes by POST instead', async () => {
    const { client, wire } = await server('apq');
    await client('apq', undefined, 100).request(StatusDocument);
    expect(wire.every(({ method }) => method === 'POST')).toBe(true);
  });
});

describe('createClient: typed errors', () => {
  it('UNAUTHENTICATED, FORBIDDEN and a step-up challenge (with acr_values and max_age) are typed; other errors are GraphQLRequestError', async () => {
    const { client } = await server('off');
    await expect(client('off').request(DocumentsDocument, {})).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(client('off', 'token').request(RenamePasskeyDocument, { id: 'p1', label: 'x' })).rejects.toBeInstanceOf(ForbiddenError);
    const stepUp = await client('off', 'token')
      .request(SetLegalHoldDocument, { id: 'd1', legalHold: true })
      .catch((error: unknown) => error);
    expect(stepUp).toBeInstanceOf(StepUpRequiredError);
    expect(stepUp).toMatchObject({ acrValues: 'urn:latchkey:acr:phr', maxAge: 300, code: 'INSUFFICIENT_USER_AUTHENTICATION' });
    const mismatch = await (await server('allowlist'))
      .client('apq')
      .request(StatusDocument)
      .catch((error: unknown) => error);
    expect(mismatch).toBeInstanceOf(GraphQLRequestError);
    expect(mismatch).toMatchObject({ code: 'PERSISTED_QUERY_NOT_ALLOWED', status: 400 });
  });

  it('execute() returns partial data with its errors instead of throwing', async () => {
    const { client } = await server('off');
    const result = await client('off').execute(DocumentsDocument, {});
    expect(result.data).toBeNull();
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('a server that cannot be reached is a NetworkError', async () => {
    const unreachable = createClient({ url: 'http://127.0.0.1:1/graphql', persisted: 'off' });
    await expect(unreachable.request(StatusDocument)).rejects.toBeInstanceOf(NetworkError);
  });
});
