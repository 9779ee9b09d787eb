import { onPostgres } from '@latchkey/db/testing';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { ApolloClient, ApolloLink, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import {
  DocumentsDocument,
  ForbiddenError,
  SetLegalHoldDocument,
  StatusDocument,
  StepUpRequiredError,
  UnauthenticatedError,
  createClient,
} from '@latchkey/client';
import { persistedOperations, seedDemoData } from '@latchkey/db';
import { Client as UrqlClient, fetchExchange, gql as urqlGql } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOf, type Demo } from './support/demo.js';
import { createOwnDatabase, startTestService, type TestService } from './support/service.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** The manifest `pnpm codegen` writes for packages/client (the trusted-documents allowlist). */
const MANIFEST = createRequire(import.meta.url).resolve('@latchkey/client/persisted-documents.json');

/** What a client put on the wire: method, whether the text was sent, whether a hash or id was sent. */
interface Wire {
  method: string;
  status: number;
  text: boolean;
  hash: boolean;
}

/** The real fetch, with a record of each request (clients are not mocked: they talk to the real server). */
function recordingFetch() {
  const wire: Wire[] = [];
  const fetchFn: typeof fetch = async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = init?.method ?? 'GET';
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : {};
    const response = await fetch(input, init);
    const hash = Boolean(
      url.searchParams.get('extensions')?.includes('sha256Hash') ||
        url.searchParams.has('documentId') ||
        (body['extensions'] as any)?.persistedQuery ||
        body['documentId'],
    );
    wire.push({ method, status: response.status, text: url.searchParams.has('query') || typeof body['query'] === 'string', hash });
    return response;
  };
  return { wire, fetch: fetchFn };
}

function apolloClient(uri: string, options: { token?: string } = {}) {
  const recorder = recordingFetch();
  const auth = new ApolloLink((operation, forward) => {
    if (options.token) operation.setContext({ headers: { authorization: `Bearer ${options.token}` } });
    return forward(operation);
  });
  const persisted = new PersistedQueryLink({ sha256, useGETForHashedQueries: true });
  const client = new ApolloClient({
    link: ApolloLink.from([auth, persisted, new HttpLink({ uri, fetch: recorder.fetch })]),
    cache: new InMemoryCache(),
    defaultOptions: { query: { fetchPolicy: 'network-only' } },
  });
  return { client, wire: recorder.wire };
}

function urqlClient(url: string, options: { token?: string } = {}) {
  const recorder = recordingFetch();
  const client = new UrqlClient({
    url,
    exchanges: [persistedExchange({ preferGetForPersistedQueries: true }), fetchExchange],
    fetch: recorder.fetch,
    fetchOptions: () => (options.token ? { headers: { authorization: `Bearer ${options.token}` } } : {}),
    requestPolicy: 'network-only',
  });
  return { client, wire: recorder.wire };
}

const DOCUMENT_TITLES = 'query DocumentTitles { documents(first: 3) { edges { node { title } } } }';
const STATUS = 'query ServiceStatus { status { service version } }';

describe("automatic persisted queries with the ecosystem's clients", () => {
  let service: TestService;
  let demo: Demo;
  beforeAll(async () => {
    service = await startTestService({ PERSISTED_MODE: 'apq' });
    await seedDemoData(service.database);
    demo = await demoOf(service);
  });
  afterAll(() => service?.stop());

  it('Apollo Client with its persisted-queries link: the first call registers (hash by GET, then text by POST), later calls send only the hash', async () => {
    const { client, wire } = apolloClient(service.graphqlUrl, { token: await demo.token('alice') });
    const first = await client.query({ query: gql(DOCUMENT_TITLES) });
    expect((first.data as any).documents.edges.length).toBeGreaterThan(0);
    expect(wire).toEqual([
      { method: 'GET', status: 404, text: false, hash: true },
      { method: 'POST', status: 200, text: true, hash: true },
    ]);
    await client.query({ query: gql(DOCUMENT_TITLES) });
    expect(wire.slice(2)).toEqual([{ method: 'GET', status: 200, text: false, hash: true }]);
  });

  it('urql with its persisted exchange: the same (it retries by GET, with the text)', async () => {
    const { client, wire } = urqlClient(service.graphqlUrl);
    const first = await client.query(urqlGql(STATUS), {}).toPromise();
    expect(first.error).toBeUndefined();
    expect(first.data).toEqual({ status: { service: 'latchkey', version: '0.1.0-test' } });
    expect(wire).toEqual([
      { method: 'GET', status: 404, text: false, hash: true },
      { method: 'GET', status: 200, text: true, hash: true },
    ]);
    const again = await client.query(urqlGql(STATUS), {}).toPromise();
    expect(again.data).toEqual(first.data);
    expect(wire.slice(2)).toEqual([{ method: 'GET', status: 200, text: false, hash: true }]);
  });

  it('a query one client registered is served by hash alone to another client with nothing cached (one store per service)', async () => {
    const query = 'query SharedStatus { status { serverTime } }';
    await apolloClient(service.graphqlUrl).client.query({ query: gql(query) });
    const { client, wire } = apolloClient(service.graphqlUrl);
    expect((await client.query({ query: gql(query) })).data).toMatchObject({ status: { serverTime: expect.any(String) } });
    expect(wire).toEqual([{ method: 'GET', status: 200, text: false, hash: true }]);
  });

  it('the typed client (packages/client, apq): hash-first GET for queries, registration on PersistedQueryNotFound, POST for mutations; typed errors', async () => {
    const { wire, fetch } = recordingFetch();
    const alice = await demo.token('alice');
    const client = createClient({ url: service.graphqlUrl, getAccessToken: () => alice, persisted: 'apq', fetch });
    const page = await client.request(DocumentsDocument, { first: 5 });
    expect(page.documents.edges.length).toBeGreaterThan(0);
    await client.request(DocumentsDocument, { first: 5 });
    expect(wire).toEqual([
      { method: 'GET', status: 404, text: false, hash: true },
      { method: 'POST', status: 200, text: true, hash: true },
      { method: 'GET', status: 200, text: false, hash: true },
    ]);

    // Guest: UNAUTHENTICATED; a VIEWER setting a legal hold: FORBIDDEN; the owner with a link-only sign-in: a step-up.
    const guest = createClient({ url: service.graphqlUrl, fetch });
    await expect(guest.request(DocumentsDocument, {})).rejects.toBeInstanceOf(UnauthenticatedError);
    const held = demo.documentId.values().next().value!;
    const bob = createClient({ url: service.graphqlUrl, getAccessToken: () => demo.token('bob'), fetch });
    await expect(bob.request(SetLegalHoldDocument, { id: held, legalHold: true })).rejects.toBeInstanceOf(ForbiddenError);
    const stepUp = await client.request(SetLegalHoldDocument, { id: held, legalHold: true }).catch((error: unknown) => error);
    expect(stepUp).toBeInstanceOf(StepUpRequiredError);
    expect(stepUp).toMatchObject({ acrValues: 'urn:latchkey:acr:phr', status: 401, code: 'INSUFFICIENT_USER_AUTHENTICATION' });
    expect(wire.filter((entry) => entry.method === 'POST').length).toBeGreaterThan(1);
  });
});

describe.runIf(onPostgres('the PostgreSQL-only tests'))('on a second instance (two api instances on one PostgreSQL)', () => {
  let one: TestService;
  let two: TestService;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const own = await createOwnDatabase(process.env['DATABASE_URL']!);
    drop = own.drop;
    one = await startTestService({ DATABASE_URL: own.url });
    two = await startTestService({ DATABASE_URL: own.url });
  });
  afterAll(async () => {
    await one?.stop();
    await two?.stop();
    await drop?.();
  });

  it('Apollo Client and urql register on one instance; their fresh clients on the other send only the hash', async () => {
    const query = 'query TwoInstances { status { service } }';
    const first = apolloClient(one.graphqlUrl);
    await first.client.query({ query: gql(query) });
    expect(first.wire.map((entry) => entry.status)).toEqual([404, 200]);
    // urql prints the document its own way (so another hash): it registers its text too.
    const firstUrql = urqlClient(one.graphqlUrl);
    await firstUrql.client.query(urqlGql(query), {}).toPromise();
    expect(firstUrql.wire.map((entry) => entry.status)).toEqual([404, 200]);
    const apollo = apolloClient(two.graphqlUrl);
    expect((await apollo.client.query({ query: gql(query) })).data).toMatchObject({ status: { service: 'latchkey' } });
    expect(apollo.wire).toEqual([{ method: 'GET', status: 200, text: false, hash: true }]);
    const urql = urqlClient(two.graphqlUrl);
    expect((await urql.client.query(urqlGql(query), {}).toPromise()).data).toEqual({ status: { service: 'latchkey' } });
    expect(urql.wire).toEqual([{ method: 'GET', status: 200, text: false, hash: true }]);
  });
});

describe('trusted documents: PERSISTED_MODE=allowlist with the manifest the client codegen writes', () => {
  let service: TestService;
  let demo: Demo;
  beforeAll(async () => {
    service = await startTestService({ PERSISTED_MODE: 'allowlist', PERSISTED_ALLOWLIST_FILE: MANIFEST });
    await seedDemoData(service.database);
    demo = await demoOf(service);
  });
  afterAll(() => service?.stop());

  it('the generated operations run by id (GET for queries, POST for mutations); nothing else runs, nothing registers', async () => {
    const { wire, fetch } = recordingFetch();
    const client = createClient({ url: service.graphqlUrl, getAccessToken: () => demo.token('alice'), persisted: 'trusted', fetch });
    expect((await client.request(StatusDocument)).status.service).toBe('latchkey');
    expect((await client.request(DocumentsDocument, { first: 3 })).documents.edges.length).toBeGreaterThan(0);
    expect(wire).toEqual([
      { method: 'GET', status: 200, text: false, hash: true },
      { method: 'GET', status: 200, text: false, hash: true },
    ]);
    const before = await service.database.db.select().from(persistedOperations);
    expect(before.every((row) => row.source === 'allowlist')).toBe(true);

    // A hand-written query: refused as text, and as Apollo's hash-then-text.
    const handWritten = await fetch(service.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: '{ status { service } }' }),
    });
    expect(handWritten.status).toBe(400);
    expect(((await handWritten.json()) as any).errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_ALLOWED');
    const apollo = apolloClient(service.graphqlUrl);
    await expect(apollo.client.query({ query: gql('query Sneaky { status { version } }') })).rejects.toThrow(/trusted documents/);
    expect(apollo.wire.map((entry) => entry.status)).toEqual([404, 400]);
    expect(await service.database.db.select().from(persistedOperations)).toHaveLength(before.length);
  });

  it('an apq-mode client cannot register there either, and an unknown documentId is PERSISTED_QUERY_NOT_FOUND', async () => {
    const client = createClient({ url: service.graphqlUrl, persisted: 'apq' });
    await expect(client.request(StatusDocument)).rejects.toMatchObject({ code: 'PERSISTED_QUERY_NOT_ALLOWED' });
    const unknown = await fetch(`${service.graphqlUrl}?documentId=sha256:${'a'.repeat(64)}`, {
      headers: { accept: 'application/graphql-response+json' },
    });
    expect(unknown.status).toBe(404);
  });
});
