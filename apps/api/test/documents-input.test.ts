import { randomUUID } from 'node:crypto';
import { documents } from '@latchkey/db';
import { count, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRest, demoOf, reseed, STEPPED_UP, type Demo, type Persona } from './support/demo.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';

/**
 * Bad input and the error rules of the spec ("Errors" 1-5, "Authorization" 6 and 12) on the documents API,
 * over GraphQL and REST. The test service's stop() fails the file if any request was answered 5xx, so every
 * case below is also a "never 5xx" check.
 */

const GQL = 'application/graphql-response+json';
const JSON_TYPE = 'application/json';
const MAX_BODY_BYTES = 300_000; // a 100001-character body fits in a GraphQL request; a 400 kB REST body does not

let service: TestService;
let demo: Demo;
const tokens = new Map<Persona, string>();

beforeAll(async () => {
  service = await startTestService({ MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
  await reseed(service.database);
  demo = await demoOf(service);
  // tokens that meet every step-up (spec Multi-factor rules 6): input rules are judged for allowed callers
  for (const persona of ['alice', 'bob', 'carol'] as const) tokens.set(persona, await demo.token(persona, STEPPED_UP));
});
afterAll(() => service?.stop());

const token = (persona: Persona) => tokens.get(persona)!;
const docId = (title: string) => demo.documentId.get(title)!;
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function gql(persona: Persona, query: string, variables?: Record<string, unknown>, accept = GQL) {
  return postGraphQL(service.graphqlUrl, { query, ...(variables ? { variables } : {}) }, { token: token(persona), accept });
}

/** 1-based line and column of the first occurrence of `needle` in `query` (for exact `locations`). */
function at(query: string, needle: string, occurrence = 0): { line: number; column: number } {
  let index = -1;
  for (let i = 0; i <= occurrence; i++) index = query.indexOf(needle, index + 1);
  if (index < 0) throw new Error(`"${needle}" not in query`);
  const before = query.slice(0, index).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

/** What the documents table holds: row count, newest updated_at (PostgreSQL's text, microseconds kept), digest of every row. */
async function snapshot() {
  const [row] = await service.database.db
    .select({
      rows: count(),
      latestUpdate: sql<string | null>`max(${documents.updatedAt})::text`,
      digest: sql<string>`md5(coalesce(string_agg(${documents}::text, '|' order by ${documents.id}), ''))`,
    })
    .from(documents);
  return row!;
}

/** Runs `body` and asserts that the documents table is exactly as it was before. */
async function writesNothing(body: () => Promise<void>): Promise<void> {
  const before = await snapshot();
  expect(before.rows).toBe(7);
  await body();
  expect(await snapshot()).toEqual(before);
}

// ---------------------------------------------------------------------------------------------------------
// 1. Bad input
// ---------------------------------------------------------------------------------------------------------

/** An execution error: 200 under both media types, `data` present, one BAD_USER_INPUT error at the field's path. */
interface ExecutionCase {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  /** `data` as it must come back (null for the Non-Null root `documents`) */
  data: unknown;
  path: (string | number)[];
  field: string[];
  message: string;
  /** text in the query where the failing field starts */
  locatedAt: string;
}

/** A request error (validation or variable coercion): no `data`, 400 under graphql-response+json, 200 under application/json. */
interface RequestCase {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  code: 'GRAPHQL_VALIDATION_FAILED' | 'BAD_USER_INPUT';
  message: string | RegExp;
  locatedAt: string;
}

const DOCUMENT_BY_ID = 'query ($id: ID!) { document(id: $id) { id title } }';
const UPDATE = 'mutation ($input: UpdateDocumentInput!) { updateDocument(input: $input) { document { id } userErrors { code } } }';
const CREATE = 'mutation ($input: CreateDocumentInput!) { createDocument(input: $input) { document { id } userErrors { code } } }';
const LIST =
  'query ($after: String, $first: Int, $filter: DocumentFilter) { documents(after: $after, first: $first, filter: $filter) { edges { cursor } } }';

const ID_MESSAGE = 'id must be a document id (a UUID).';
const CURSOR_MESSAGE = 'after is not a cursor from this connection.';
const FIRST_MESSAGE = 'first must be an integer from 0 to 100.';

function executionCases(): ExecutionCase[] {
  const draft = docId('Draft roadmap');
  const malformedIds = [
    '42',
    "'; drop table documents; --",
    '',
    'x'.repeat(5000),
    `${randomUUID()}x`,
    '00000000-0000-0000-0000-00000000000g',
  ];
  const cases: ExecutionCase[] = [];
  for (const id of malformedIds) {
    const label = id.length > 40 ? `${id.length} chars` : JSON.stringify(id);
    cases.push(
      {
        name: `document(id: ${label})`,
        query: DOCUMENT_BY_ID,
        variables: { id },
        data: { document: null },
        path: ['document'],
        field: ['id'],
        message: ID_MESSAGE,
        locatedAt: 'document(',
      },
      {
        name: `updateDocument(id: ${label})`,
        query: UPDATE,
        variables: { input: { id, title: 'Renamed' } },
        data: { updateDocument: null },
        path: ['updateDocument'],
        field: ['input', 'id'],
        message: ID_MESSAGE,
        locatedAt: 'updateDocument(',
      },
      {
        name: `deleteDocument(id: ${label})`,
        query: 'mutation ($id: ID!) { deleteDocument(id: $id) { deletedDocumentId } }',
        variables: { id },
        data: { deleteDocument: null },
        path: ['deleteDocument'],
        field: ['id'],
        message: ID_MESSAGE,
        locatedAt: 'deleteDocument(',
      },
      {
        name: `publishDocument(id: ${label})`,
        query: 'mutation ($id: ID!) { publishDocument(id: $id) { document { id } } }',
        variables: { id },
        data: { publishDocument: null },
        path: ['publishDocument'],
        field: ['id'],
        message: ID_MESSAGE,
        locatedAt: 'publishDocument(',
      },
    );
  }
  // the same, as literals in the document text
  cases.push(
    {
      name: 'document(id: "42") literal',
      query: '{ document(id: "42") { title } }',
      data: { document: null },
      path: ['document'],
      field: ['id'],
      message: ID_MESSAGE,
      locatedAt: 'document(',
    },
    {
      name: 'document(id: "\'; drop table") literal',
      query: `{ document(id: "'; drop table documents; --") { title } }`,
      data: { document: null },
      path: ['document'],
      field: ['id'],
      message: ID_MESSAGE,
      locatedAt: 'document(',
    },
  );

  const cursors: [string, string][] = [
    ['garbage', 'garbage'],
    ['base64url of another JSON value', b64url({ createdAt: '2024-01-01T00:00:00Z', id: randomUUID() })],
    ['base64url of a JSON string', b64url('hello')],
    ['base64url of ["not-a-date", uuid]', b64url(['not-a-date', randomUUID()])],
    ['a valid-looking cursor with a bad uuid', b64url(['2024-01-01 00:00:00.123456+00', 'not-a-uuid'])],
    ['a valid-looking cursor with a uuid-shaped non-uuid', b64url(['2024-01-01 00:00:00+00', '00000000-0000-0000-0000-00000000000z'])],
    ['a cursor with an impossible date', b64url(['2024-13-45 99:99:99+00', randomUUID()])],
    [
      'a cursor with padding and a slash (standard base64)',
      `${Buffer.from(JSON.stringify(['2024-01-01 00:00:00+00', randomUUID()])).toString('base64')}/=`,
    ],
    ['a cursor of 300 characters', 'A'.repeat(300)],
    ['base64url of invalid JSON', Buffer.from('[1,').toString('base64url')],
  ];
  for (const [label, after] of cursors) {
    cases.push({
      name: `documents(after: ${label})`,
      query: LIST,
      variables: { after },
      data: null,
      path: ['documents'],
      field: ['after'],
      message: CURSOR_MESSAGE,
      locatedAt: 'documents(',
    });
  }
  cases.push({
    name: 'documents(after: "garbage") literal',
    query: '{ documents(after: "garbage") { edges { cursor } } }',
    data: null,
    path: ['documents'],
    field: ['after'],
    message: CURSOR_MESSAGE,
    locatedAt: 'documents(',
  });

  for (const first of [101, 1_000_000, -1, 2_147_483_647]) {
    cases.push(
      {
        name: `documents(first: ${first})`,
        query: LIST,
        variables: { first },
        data: null,
        path: ['documents'],
        field: ['first'],
        message: FIRST_MESSAGE,
        locatedAt: 'documents(',
      },
      {
        name: `documents(first: ${first}) literal`,
        query: `{ documents(first: ${first}) { edges { cursor } } }`,
        data: null,
        path: ['documents'],
        field: ['first'],
        message: FIRST_MESSAGE,
        locatedAt: 'documents(',
      },
    );
  }

  const slugMessage = 'organization must be 1-63 lower-case letters, digits or hyphens.';
  for (const slug of ['ACME', 'Not A Slug', '', '-acme', 'a'.repeat(64), "acme' or '1'='1"]) {
    cases.push({
      name: `documents(filter: {organization: ${JSON.stringify(slug.slice(0, 20))}})`,
      query: LIST,
      variables: { filter: { organization: slug } },
      data: null,
      path: ['documents'],
      field: ['filter', 'organization'],
      message: slugMessage,
      locatedAt: 'documents(',
    });
    cases.push({
      name: `createDocument(organization: ${JSON.stringify(slug.slice(0, 20))})`,
      query: CREATE,
      variables: { input: { organization: slug, title: 'A new title' } },
      data: { createDocument: null },
      path: ['createDocument'],
      field: ['input', 'organization'],
      message: slugMessage,
      locatedAt: 'createDocument(',
    });
  }

  const texts: [string, Record<string, unknown>, string, string][] = [
    ['title of 201 characters', { title: 'x'.repeat(201) }, 'title', 'title must be 1-200 characters.'],
    ['title of 201 astral characters', { title: '😀'.repeat(201) }, 'title', 'title must be 1-200 characters.'],
    ['empty title', { title: '' }, 'title', 'title must be 1-200 characters.'],
    ['blank title', { title: '   ' }, 'title', 'title must not be blank.'],
    ['title with a NUL character', { title: 'a\u0000b' }, 'title', 'title must not contain NUL characters.'],
    ['body of 100001 characters', { title: 'Fresh', body: 'b'.repeat(100_001) }, 'body', 'body must be at most 100000 characters.'],
    ['body with a NUL character', { title: 'Fresh', body: 'a\u0000b' }, 'body', 'body must not contain NUL characters.'],
    [
      'internalNotes of 10001 characters',
      { title: 'Fresh', internalNotes: 'n'.repeat(10_001) },
      'internalNotes',
      'internalNotes must be at most 10000 characters.',
    ],
    [
      'internalNotes with a NUL character',
      { title: 'Fresh', internalNotes: '\u0000' },
      'internalNotes',
      'internalNotes must not contain NUL characters.',
    ],
  ];
  for (const [label, values, field, message] of texts) {
    cases.push({
      name: `createDocument: ${label}`,
      query: CREATE,
      variables: { input: { organization: 'acme', ...values } },
      data: { createDocument: null },
      path: ['createDocument'],
      field: ['input', field],
      message,
      locatedAt: 'createDocument(',
    });
    cases.push({
      name: `updateDocument: ${label}`,
      query: UPDATE,
      variables: { input: { id: draft, ...values } },
      data: { updateDocument: null },
      path: ['updateDocument'],
      field: ['input', field],
      message,
      locatedAt: 'updateDocument(',
    });
  }
  cases.push({
    name: 'updateDocument: title null',
    query: UPDATE,
    variables: { input: { id: draft, title: null } },
    data: { updateDocument: null },
    path: ['updateDocument'],
    field: ['input', 'title'],
    message: 'title cannot be null.',
    locatedAt: 'updateDocument(',
  });
  cases.push({
    name: 'updateDocument: body null',
    query: UPDATE,
    variables: { input: { id: draft, body: null } },
    data: { updateDocument: null },
    path: ['updateDocument'],
    field: ['input', 'body'],
    message: 'body cannot be null.',
    locatedAt: 'updateDocument(',
  });
  return cases;
}

function requestCases(): RequestCase[] {
  const bob = demo.userId.bob;
  return [
    {
      name: 'first: 2147483648 literal (Int overflow)',
      query: '{ documents(first: 2147483648) { edges { cursor } } }',
      code: 'GRAPHQL_VALIDATION_FAILED',
      message: 'Int cannot represent non 32-bit signed integer value: 2147483648',
      locatedAt: '2147483648',
    },
    {
      name: '$first = 2147483648 (Int overflow)',
      query: LIST,
      variables: { first: 2_147_483_648 },
      code: 'BAD_USER_INPUT',
      message: 'Variable "$first" got invalid value 2147483648; Int cannot represent non 32-bit signed integer value: 2147483648',
      locatedAt: '$first',
    },
    {
      name: '$first = "10" (a string for an Int)',
      query: LIST,
      variables: { first: '10' },
      code: 'BAD_USER_INPUT',
      message: /^Variable "\$first" got invalid value "10"; Int cannot represent non-integer value: "10"$/,
      locatedAt: '$first',
    },
    {
      name: '$first = 1.5',
      query: LIST,
      variables: { first: 1.5 },
      code: 'BAD_USER_INPUT',
      message: /^Variable "\$first" got invalid value 1\.5; Int cannot represent non-integer value: 1\.5$/,
      locatedAt: '$first',
    },
    {
      name: 'status: [DELETED] literal',
      query: '{ documents(filter: {status: [DELETED]}) { edges { cursor } } }',
      code: 'GRAPHQL_VALIDATION_FAILED',
      message: 'Value "DELETED" does not exist in "DocumentStatus" enum.',
      locatedAt: 'DELETED',
    },
    {
      name: '$filter.status = ["DELETED"]',
      query: LIST,
      variables: { filter: { status: ['DELETED'] } },
      code: 'BAD_USER_INPUT',
      message:
        'Variable "$filter" got invalid value "DELETED" at "filter.status[0]"; Value "DELETED" does not exist in "DocumentStatus" enum.',
      locatedAt: '$filter',
    },
    {
      name: '$filter with an unknown field',
      query: LIST,
      variables: { filter: { owner: 'alice' } },
      code: 'BAD_USER_INPUT',
      message: /^Variable "\$filter" got invalid value .*Field "owner" is not defined by type "DocumentFilter"\.$/,
      locatedAt: '$filter',
    },
    {
      name: 'changeMemberRole role: GOD literal',
      query: `mutation { changeMemberRole(input: {organization: "acme", userId: "${bob}", role: GOD}) { membership { role } } }`,
      code: 'GRAPHQL_VALIDATION_FAILED',
      message: 'Value "GOD" does not exist in "Role" enum.',
      locatedAt: 'GOD',
    },
    {
      name: 'changeMemberRole $role = "GOD"',
      query: `mutation ($role: Role!) { changeMemberRole(input: {organization: "acme", userId: "${bob}", role: $role}) { membership { role } } }`,
      variables: { role: 'GOD' },
      code: 'BAD_USER_INPUT',
      message: 'Variable "$role" got invalid value "GOD"; Value "GOD" does not exist in "Role" enum.',
      locatedAt: '$role',
    },
    {
      name: 'createDocument $input without a title',
      query: CREATE,
      variables: { input: { organization: 'acme' } },
      code: 'BAD_USER_INPUT',
      message: /^Variable "\$input" got invalid value .*Field "title" of required type "String!" was not provided\.$/,
      locatedAt: '$input',
    },
    {
      name: 'createDocument $input.title = 5',
      query: CREATE,
      variables: { input: { organization: 'acme', title: 5 } },
      code: 'BAD_USER_INPUT',
      message: /^Variable "\$input" got invalid value 5 at "input\.title"; String cannot represent a non string value: 5$/,
      locatedAt: '$input',
    },
  ];
}

async function expectExecutionError(c: ExecutionCase) {
  for (const accept of [GQL, JSON_TYPE]) {
    const res = await gql('alice', c.query, c.variables, accept);
    expect.soft(res.status, `${c.name} (${accept})`).toBe(200);
    expect.soft(res.headers.get('content-type'), c.name).toBe(`${accept}; charset=utf-8`);
    expect.soft(res.json, `${c.name} (${accept})`).toEqual({
      data: c.data,
      errors: [
        { message: c.message, locations: [at(c.query, c.locatedAt)], path: c.path, extensions: { code: 'BAD_USER_INPUT', field: c.field } },
      ],
    });
  }
}

async function expectRequestError(c: Pick<RequestCase, 'name' | 'query' | 'variables' | 'code' | 'message' | 'locatedAt'>) {
  for (const [accept, status] of [
    [GQL, 400],
    [JSON_TYPE, 200],
  ] as const) {
    const res = await gql('alice', c.query, c.variables, accept);
    expect.soft(res.status, `${c.name} (${accept})`).toBe(status);
    expect.soft(res.headers.get('content-type'), c.name).toBe(`${accept}; charset=utf-8`);
    // never reached execution: no `data` key at all, and no `path`
    expect.soft(res.json, `${c.name} (${accept})`).toEqual({
      errors: [
        {
          message: expect.stringMatching(
            typeof c.message === 'string' ? `^${c.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$` : c.message,
          ),
          locations: [at(c.query, c.locatedAt)],
          extensions: { code: c.code },
        },
      ],
    });
    expect.soft('data' in (res.json ?? {}), `${c.name}: data must be absent`).toBe(false);
  }
}

describe('1. Bad input gets BAD_USER_INPUT or a 4xx, never 5xx, and writes nothing', () => {
  it('GraphQL: malformed ids, cursors, page sizes, slugs and over-long or NUL strings are BAD_USER_INPUT execution errors at the field (200)', async () => {
    await writesNothing(async () => {
      for (const c of executionCases()) await expectExecutionError(c);
    });
  });

  it('GraphQL: wrong enum values and Int overflow are validation (literal) or coercion (variable) failures: no data, 400 / 200 by media type', async () => {
    await writesNothing(async () => {
      for (const c of requestCases()) await expectRequestError(c);
    });
  });

  it('GraphQL: an invalid DateTime (embargoUntil "not-a-date") is refused like any other bad literal or variable', async () => {
    const literal =
      'mutation { createDocument(input: {organization: "acme", title: "Embargoed", embargoUntil: "not-a-date"}) { document { id } } }';
    const variable =
      'mutation ($e: DateTime) { createDocument(input: {organization: "acme", title: "Embargoed", embargoUntil: $e}) { document { id } } }';
    const update = 'mutation ($e: DateTime) { updateDocument(input: {id: "ID", embargoUntil: $e}) { document { id } } }';
    await writesNothing(async () => {
      for (const value of ['not-a-date', 'tomorrow', '2026-13-01T00:00:00Z', '2026-01-01T00:00:00', 1_700_000_000]) {
        const shown = JSON.stringify(value);
        await expectRequestError({
          name: `$e = ${shown}`,
          query: variable,
          variables: { e: value },
          code: 'BAD_USER_INPUT',
          message: `Variable "$e" got invalid value ${shown}; DateTime must be an ISO 8601 string with a time zone, got ${shown}`,
          locatedAt: '$e',
        });
        await expectRequestError({
          name: `updateDocument $e = ${shown}`,
          query: update.replace('ID', docId('Draft roadmap')),
          variables: { e: value },
          code: 'BAD_USER_INPUT',
          message: `Variable "$e" got invalid value ${shown}; DateTime must be an ISO 8601 string with a time zone, got ${shown}`,
          locatedAt: '$e',
        });
      }
      // A literal that fails the scalar's parseLiteral is a validation failure: it has `locations` (spec Errors,
      // Classification) and one of the codes the design gives bad input.
      for (const [accept, status] of [
        [GQL, 400],
        [JSON_TYPE, 200],
      ] as const) {
        const res = await gql('alice', literal, undefined, accept);
        expect.soft(res.status, `literal (${accept})`).toBe(status);
        expect.soft('data' in res.json, 'literal: data must be absent').toBe(false);
        expect.soft(res.json.errors, `literal (${accept})`).toHaveLength(1);
        expect.soft(res.json.errors[0].message, 'literal').toBe('DateTime must be an ISO 8601 string with a time zone, got "not-a-date"');
        expect.soft(['GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT'], 'literal code').toContain(res.json.errors[0].extensions?.code);
        expect
          .soft(res.json.errors[0].locations, `literal (${accept}): a validation error carries locations`)
          .toEqual([at(literal, '"not-a-date"')]);
      }
    });
  });

  it('GraphQL and REST: cursors and date-times that JavaScript accepts but PostgreSQL cannot hold are BAD_USER_INPUT, not a database error', async () => {
    // Each of these passes the service's own checks (cursor.ts TIMESTAMP + Date.parse; the DateTime scalar;
    // the REST RFC 3339 check) yet is refused by PostgreSQL's timestamptz input ("date/time field value out of
    // range", "time zone displacement out of range").
    const cursors: [string, string][] = [
      ['February 30', b64url(['2024-02-30 00:00:00+00', randomUUID()])],
      ['year 0000', b64url(['0000-01-01 00:00:00+00', randomUUID()])],
      ['a +23:00 offset', b64url(['2024-01-01 00:00:00+23:00', randomUUID()])],
    ];
    await writesNothing(async () => {
      for (const [label, after] of cursors) {
        await expectExecutionError({
          name: `documents(after: a cursor dated ${label})`,
          query: LIST,
          variables: { after },
          data: null,
          path: ['documents'],
          field: ['after'],
          message: CURSOR_MESSAGE,
          locatedAt: 'documents(',
        });
        const rest = await callRest(service, 'GET', `/api/documents?after=${after}`, { token: token('alice') });
        expect.soft(rest.status, `GET /api/documents?after=<${label}>`).toBe(400);
        expect
          .soft(rest.json, `GET /api/documents?after=<${label}>`)
          .toEqual({ statusCode: 400, message: CURSOR_MESSAGE, error: 'Bad Request', code: 'BAD_USER_INPUT', field: ['after'] });
      }
      const yearZero = '0000-01-01T00:00:00Z';
      const draft = docId('Draft roadmap');
      for (const [name, query, variables] of [
        [
          'createDocument',
          'mutation ($e: DateTime) { createDocument(input: {organization: "acme", title: "Year zero", embargoUntil: $e}) { document { id } } }',
          { e: yearZero },
        ],
        [
          'updateDocument',
          `mutation ($e: DateTime) { updateDocument(input: {id: "${draft}", embargoUntil: $e}) { document { id } } }`,
          { e: yearZero },
        ],
      ] as const) {
        const res = await gql('alice', query, variables);
        // either shape is right (refused by the scalar as a request error, or by the service at the field), as
        // long as it names the bad input instead of masking a database failure
        expect.soft(res.status, `${name} embargoUntil ${yearZero}`).toBeLessThan(500);
        expect
          .soft(
            res.json.errors?.map((error: { extensions: { code: string } }) => error.extensions.code),
            `${name} embargoUntil ${yearZero}`,
          )
          .toEqual(['BAD_USER_INPUT']);
      }
      for (const [method, path, body] of [
        ['PATCH', `/api/documents/${draft}`, { embargoUntil: yearZero }],
        ['POST', '/api/documents', { organization: 'acme', title: 'Year zero', embargoUntil: yearZero }],
      ] as const) {
        const rest = await callRest(service, method, path, { token: token('alice'), body });
        expect.soft(rest.status, `${method} ${path} embargoUntil ${yearZero}`).toBe(400);
        expect
          .soft(rest.json, `${method} ${path} embargoUntil ${yearZero}`)
          .toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'BAD_USER_INPUT', field: ['embargoUntil'] });
      }
    });
  });

  it('REST: malformed ids, query parameters and bodies are 400/405/404/413/415 with the error body, nothing written', async () => {
    const alice = token('alice');
    const draft = docId('Draft roadmap');
    const badRequest = (message: string, field?: string[]) => ({
      statusCode: 400,
      message,
      error: 'Bad Request',
      code: 'BAD_USER_INPUT',
      ...(field ? { field } : {}),
    });
    const expectRest = async (
      method: string,
      path: string,
      status: number,
      body: unknown,
      options: { body?: unknown; headers?: Record<string, string> } = {},
    ) => {
      const res = await callRest(service, method, path, { token: alice, ...options });
      expect.soft(res.status, `${method} ${path.slice(0, 80)}`).toBe(status);
      expect.soft(res.headers.get('content-type'), `${method} ${path.slice(0, 80)}`).toBe('application/json; charset=utf-8');
      expect.soft(res.json, `${method} ${path.slice(0, 80)}`).toEqual(body);
      return res;
    };
    await writesNothing(async () => {
      for (const id of ['not-a-uuid', '42', encodeURIComponent("'; drop table documents; --"), 'x'.repeat(5000), `${randomUUID()}x`]) {
        await expectRest('GET', `/api/documents/${id}`, 400, badRequest('id must be a document id (a UUID).', ['id']));
        await expectRest('PATCH', `/api/documents/${id}`, 400, badRequest('id must be a document id (a UUID).', ['id']), {
          body: { title: 'Renamed' },
        });
        await expectRest('DELETE', `/api/documents/${id}`, 400, badRequest('id must be a document id (a UUID).', ['id']));
        await expectRest('POST', `/api/documents/${id}/publish`, 400, badRequest('id must be a document id (a UUID).', ['id']));
        await expectRest('POST', `/api/documents/${id}/archive`, 400, badRequest('id must be a document id (a UUID).', ['id']));
      }

      for (const first of ['abc', '101', '-1', '1e2', '1.5', '99999', '']) {
        // `first=` (empty) is the one value that is not a number at all either
        await expectRest('GET', `/api/documents?first=${first}`, 400, badRequest('first must be an integer from 0 to 100.', ['first']));
      }
      for (const after of [
        'garbage',
        b64url(['not-a-date', randomUUID()]),
        b64url(['2024-01-01 00:00:00+00', 'not-a-uuid']),
        b64url({ a: 1 }),
      ]) {
        await expectRest(
          'GET',
          `/api/documents?after=${encodeURIComponent(after)}`,
          400,
          badRequest('after is not a cursor from this connection.', ['after']),
        );
      }
      await expectRest(
        'GET',
        '/api/documents?status=DELETED',
        400,
        badRequest('status must be one of DRAFT, PUBLISHED, ARCHIVED.', ['status']),
      );
      await expectRest(
        'GET',
        '/api/documents?status=DRAFT,deleted',
        400,
        badRequest('status must be one of DRAFT, PUBLISHED, ARCHIVED.', ['status']),
      );
      await expectRest(
        'GET',
        '/api/documents?organization=Not%20A%20Slug',
        400,
        badRequest('organization must be 1-63 lower-case letters, digits or hyphens.', ['organization']),
      );

      const valid = { organization: 'acme', title: 'A valid new title' };
      for (const contentType of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
      ]) {
        await expectRest(
          'POST',
          '/api/documents',
          415,
          { statusCode: 415, message: 'Request bodies must be application/json (UTF-8).', error: 'Unsupported Media Type' },
          { body: JSON.stringify(valid), headers: { 'content-type': contentType } },
        );
      }
      await expectRest(
        'PATCH',
        `/api/documents/${draft}`,
        415,
        { statusCode: 415, message: 'Request bodies must be application/json (UTF-8).', error: 'Unsupported Media Type' },
        { body: '{"title":"x"}', headers: { 'content-type': 'text/plain' } },
      );
      const notJson = { statusCode: 400, message: 'The request body is not valid JSON.', error: 'Bad Request' };
      await expectRest('POST', '/api/documents', 400, notJson, { body: '{"organization": "acme", "title": ' });
      await expectRest('POST', '/api/documents', 400, notJson, { body: "{'organization': 'acme'}" });
      await expectRest('PATCH', `/api/documents/${draft}`, 400, notJson, { body: '{"title": "x",}' });
      const notObject = badRequest('The request body must be a JSON object.');
      for (const body of ['[]', JSON.stringify([valid]), '"acme"', '42', 'null', 'true']) {
        await expectRest('POST', '/api/documents', 400, notObject, { body });
      }
      await expectRest('PATCH', `/api/documents/${draft}`, 400, notObject, { body: '[{"title":"x"}]' });
      await expectRest('POST', '/api/documents', 400, badRequest('Unknown field "ownerId".', ['ownerId']), {
        body: { ...valid, ownerId: demo.userId.bob },
      });
      await expectRest('POST', '/api/documents', 400, badRequest('Unknown field "status".', ['status']), {
        body: { ...valid, status: 'PUBLISHED' },
      });
      await expectRest('PATCH', `/api/documents/${draft}`, 400, badRequest('Unknown field "legalHold".', ['legalHold']), {
        body: { legalHold: true },
      });
      await expectRest('PATCH', `/api/documents/${draft}`, 400, badRequest('Unknown field "organization".', ['organization']), {
        body: { organization: 'globex' },
      });
      await expectRest('POST', '/api/documents', 400, badRequest('Unknown field "__proto__".', ['__proto__']), {
        body: '{"organization":"acme","title":"x","__proto__":{"admin":true}}',
      });
      await expectRest('POST', '/api/documents', 400, badRequest('title must be a string.', ['title']), {
        body: { organization: 'acme', title: 42 },
      });
      await expectRest('POST', '/api/documents', 400, badRequest('title must be a string.', ['title']), {
        body: { organization: 'acme', title: null },
      });
      await expectRest('POST', '/api/documents', 400, badRequest('organization must be a string.', ['organization']), {
        body: { organization: ['acme'], title: 'x' },
      });
      await expectRest('POST', '/api/documents', 400, badRequest('body must be a string.', ['body']), {
        body: { ...valid, body: { text: 'x' } },
      });
      await expectRest('POST', '/api/documents', 400, badRequest('internalNotes must be a string or null.', ['internalNotes']), {
        body: { ...valid, internalNotes: 1 },
      });
      await expectRest('POST', '/api/documents', 400, badRequest('organization (a slug) is required.', ['organization']), {
        body: { title: 'x' },
      });
      await expectRest(
        'POST',
        '/api/documents',
        400,
        badRequest('organization must be 1-63 lower-case letters, digits or hyphens.', ['organization']),
        { body: { organization: 'ACME', title: 'x' } },
      );
      await expectRest('POST', '/api/documents', 400, badRequest('title is required.', ['title']), { body: { organization: 'acme' } });
      await expectRest('POST', '/api/documents', 400, badRequest('title must be 1-200 characters.', ['title']), {
        body: { organization: 'acme', title: 't'.repeat(201) },
      });
      await expectRest('POST', '/api/documents', 400, badRequest('title must not be blank.', ['title']), {
        body: { organization: 'acme', title: '  \t ' },
      });
      await expectRest('POST', '/api/documents', 400, badRequest('title must not contain NUL characters.', ['title']), {
        body: { organization: 'acme', title: 'a\u0000b' },
      });
      await expectRest('POST', '/api/documents', 400, badRequest('body must be at most 100000 characters.', ['body']), {
        body: { ...valid, body: 'b'.repeat(100_001) },
      });
      await expectRest('POST', '/api/documents', 400, badRequest('internalNotes must be at most 10000 characters.', ['internalNotes']), {
        body: { ...valid, internalNotes: 'n'.repeat(10_001) },
      });
      await expectRest('PATCH', `/api/documents/${draft}`, 400, badRequest('title must be 1-200 characters.', ['title']), {
        body: { title: '' },
      });
      for (const embargoUntil of ['tomorrow', 'not-a-date', '2026-13-45T00:00:00Z', 1_700_000_000, true]) {
        await expectRest(
          'PATCH',
          `/api/documents/${draft}`,
          400,
          badRequest('embargoUntil must be an RFC 3339 date-time (years 1-9999) or null.', ['embargoUntil']),
          { body: { embargoUntil } },
        );
      }
      await expectRest(
        'POST',
        '/api/documents',
        400,
        badRequest('embargoUntil must be an RFC 3339 date-time (years 1-9999) or null.', ['embargoUntil']),
        { body: { ...valid, embargoUntil: 'tomorrow' } },
      );

      const methodNotAllowed = { statusCode: 405, message: 'Method Not Allowed', error: 'Method Not Allowed' };
      for (const method of ['DELETE', 'PATCH', 'PUT']) {
        const res = await expectRest(method, '/api/documents', 405, methodNotAllowed);
        expect.soft(res.headers.get('allow'), `${method} /api/documents`).toBe('GET, HEAD, POST');
      }
      const res = await expectRest('POST', `/api/documents/${draft}`, 405, methodNotAllowed, { body: { title: 'x' } });
      expect.soft(res.headers.get('allow')).toBe('GET, HEAD, PATCH, PUT, DELETE');
      const publishGet = await expectRest('GET', `/api/documents/${draft}/publish`, 405, methodNotAllowed);
      expect.soft(publishGet.headers.get('allow')).toBe('POST');
      // HEAD answers like GET, without a body.
      const head = await fetch(`${service.url}/api/documents/${draft}`, {
        method: 'HEAD',
        headers: { authorization: `Bearer ${await demo.token('alice')}` },
      });
      expect.soft([head.status, await head.text()]).toEqual([200, '']);

      const notFound = { statusCode: 404, message: 'Not Found', error: 'Not Found' };
      await expectRest('GET', '/api/nothing', 404, notFound);
      await expectRest('POST', '/api/nothing', 404, notFound, { body: valid });
      await expectRest('GET', `/api/documents/${draft}/history`, 404, notFound);

      const tooLarge = await expectRest(
        'POST',
        '/api/documents',
        413,
        { statusCode: 413, message: `The request body is larger than ${MAX_BODY_BYTES} bytes.`, error: 'Payload Too Large' },
        { body: { ...valid, body: 'y'.repeat(MAX_BODY_BYTES + 100_000) } },
      );
      expect.soft(tooLarge.headers.get('connection')).toBe('close');
      await expectRest(
        'PATCH',
        `/api/documents/${draft}`,
        413,
        { statusCode: 413, message: `The request body is larger than ${MAX_BODY_BYTES} bytes.`, error: 'Payload Too Large' },
        { body: { body: 'y'.repeat(MAX_BODY_BYTES + 1) } },
      );
    });
  });
});

// ---------------------------------------------------------------------------------------------------------
// 2. Authorization 6
// ---------------------------------------------------------------------------------------------------------

/** The parts of a response a client can observe, minus what differs per request (date, request id). */
function observable(res: { status: number; headers: Headers; text: string }) {
  const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'date' && name !== 'x-request-id'));
  return { status: res.status, headers, text: res.text };
}

describe('2. Authorization 6: a well-formed id that does not exist answers exactly like a forbidden one', () => {
  it('GraphQL: document, updateDocument, publishDocument, archiveDocument, deleteDocument and setLegalHold', async () => {
    const acmeDocument = docId('Quarterly plan');
    const operations = [
      'query ($id: ID!) { document(id: $id) { id title internalNotes } }',
      'mutation ($id: ID!) { updateDocument(input: {id: $id, title: "Hijacked"}) { document { id } userErrors { code } } }',
      'mutation ($id: ID!) { publishDocument(id: $id) { document { id } userErrors { code } } }',
      'mutation ($id: ID!) { archiveDocument(id: $id) { document { id } userErrors { code } } }',
      'mutation ($id: ID!) { deleteDocument(id: $id) { deletedDocumentId userErrors { code } } }',
      'mutation ($id: ID!) { setLegalHold(id: $id, legalHold: true) { document { id } userErrors { code } } }',
    ];
    await writesNothing(async () => {
      for (const query of operations) {
        for (const accept of [GQL, JSON_TYPE]) {
          const forbidden = await gql('carol', query, { id: acmeDocument }, accept);
          const missing = await gql('carol', query, { id: randomUUID() }, accept);
          const field = query.match(/\{ (\w+)\(/)![1]!;
          expect(forbidden.json, query).toEqual({
            data: { [field]: null },
            errors: [
              {
                message: 'The requested record was not found.',
                locations: [at(query, `${field}(`)],
                path: [field],
                extensions: { code: 'NOT_FOUND' },
              },
            ],
          });
          expect(observable(missing), `${query} (${accept})`).toEqual(observable(forbidden));
        }
      }
    });
  });

  it("REST: GET, PATCH, PUT, DELETE, publish and archive of another tenant's document are the same 404 as a missing one", async () => {
    const acmeDocument = docId('Quarterly plan');
    const carol = token('carol');
    const calls: [string, string, unknown?][] = [
      ['GET', ''],
      ['PATCH', '', { title: 'Hijacked' }],
      ['PUT', '', { title: 'Hijacked' }],
      ['DELETE', ''],
      ['POST', '/publish'],
      ['POST', '/archive'],
    ];
    await writesNothing(async () => {
      for (const [method, suffix, body] of calls) {
        const forbidden = await callRest(service, method, `/api/documents/${acmeDocument}${suffix}`, { token: carol, body });
        const missing = await callRest(service, method, `/api/documents/${randomUUID()}${suffix}`, { token: carol, body });
        expect(forbidden.status, `${method} ${suffix}`).toBe(404);
        expect(forbidden.json).toEqual({
          statusCode: 404,
          message: 'The requested record was not found.',
          error: 'Not Found',
          code: 'NOT_FOUND',
        });
        expect(observable(missing), `${method} ${suffix}`).toEqual(observable(forbidden));
      }
    });
  });
});

// ---------------------------------------------------------------------------------------------------------
// 3. Errors 1
// ---------------------------------------------------------------------------------------------------------

describe('3. Errors 1: partial success', () => {
  it("a VIEWER gets every document and their own e-mail; internalNotes is null with FORBIDDEN at each row's path; 200 under both media types", async () => {
    const query = 'query { documents { edges { node { title internalNotes } } } me { email } }';
    for (const accept of [JSON_TYPE, GQL]) {
      const res = await gql('bob', query, undefined, accept);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(`${accept}; charset=utf-8`);
      const edges = res.json.data.documents.edges as { node: { title: string; internalNotes: null } }[];
      // bob (VIEWER) sees the published, non-embargoed acme documents only
      expect(edges.map(({ node }) => node.title).sort()).toEqual(['Litigation memo', 'Quarterly plan']);
      expect(res.json).toEqual({
        data: {
          documents: { edges: edges.map(({ node }) => ({ node: { title: node.title, internalNotes: null } })) },
          me: { email: 'bob@acme.test' },
        },
        errors: edges.map((_, index) => ({
          message: 'You are not allowed to do this.',
          locations: [at(query, 'internalNotes')],
          path: ['documents', 'edges', index, 'node', 'internalNotes'],
          extensions: { code: 'FORBIDDEN' },
        })),
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// 4. Errors 2
// ---------------------------------------------------------------------------------------------------------

describe('4. Errors 2: a Non-Null field that fails moves the null to the nearest nullable ancestor', () => {
  it('a failing nullable root field (document) is null on its own; its siblings are intact', async () => {
    const query = `query { document(id: "${docId('Quarterly plan')}") { title viewerCan { update } } missing: document(id: "${randomUUID()}") { title } }`;
    for (const accept of [GQL, JSON_TYPE]) {
      const res = await gql('bob', query, undefined, accept);
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        data: { document: { title: 'Quarterly plan', viewerCan: { update: false } }, missing: null },
        errors: [
          {
            message: 'The requested record was not found.',
            locations: [at(query, 'missing:')],
            path: ['missing'],
            extensions: { code: 'NOT_FOUND' },
          },
        ],
      });
    }
  });

  it('documents is DocumentConnection! on Query: its BAD_USER_INPUT nulls `data` itself and discards the other root fields', async () => {
    const query = 'query { me { email } documents(first: 1000) { edges { node { title } } } status { service } }';
    for (const accept of [GQL, JSON_TYPE]) {
      const res = await gql('bob', query, undefined, accept);
      // execution began, so this is an execution result: 200 under both media types, `data` present and null
      expect(res.status).toBe(200);
      expect('data' in res.json).toBe(true);
      expect(res.json).toEqual({
        data: null,
        errors: [
          {
            message: 'first must be an integer from 0 to 100.',
            locations: [at(query, 'documents(')],
            path: ['documents'],
            extensions: { code: 'BAD_USER_INPUT', field: ['first'] },
          },
        ],
      });
    }
  });

  it('the same field under an alias, beside a healthy nullable root field: still data null (no nullable ancestor below the root)', async () => {
    const query =
      'query { ok: documents(first: 1) { pageInfo { hasNextPage } } bad: documents(after: "garbage") { pageInfo { hasNextPage } } doc: document(id: "42") { title } }';
    const res = await gql('alice', query);
    expect(res.status).toBe(200);
    expect(res.json.data).toBeNull();
    // `data` is null, but every error raised during execution is still reported
    expect(res.json.errors).toEqual(
      expect.arrayContaining([
        {
          message: CURSOR_MESSAGE,
          locations: [at(query, 'bad:')],
          path: ['bad'],
          extensions: { code: 'BAD_USER_INPUT', field: ['after'] },
        },
      ]),
    );
    for (const error of res.json.errors) expect(error.extensions.code).toBe('BAD_USER_INPUT');
  });
});

// ---------------------------------------------------------------------------------------------------------
// 5. Errors 3
// ---------------------------------------------------------------------------------------------------------

describe('5. Errors 3: Non-Null violations inside lists of Non-Null items', () => {
  /*
   * No natural domain failure exists inside a list of Non-Null items in this schema: the only lists of
   * Non-Null objects are DocumentConnection.edges ([DocumentEdge!]!), User.memberships ([Membership!]!),
   * Viewer.amr/scope ([String!]!) and UserError lists, and every field that can fail for a caller
   * (Document.internalNotes, Organization.billingEmail, User.email, the root fields) is nullable or at the
   * root. Document.owner (User!) can only be null if the owner row is missing, which the foreign key
   * prevents. So the failure is induced: one document's owner_id is pointed at a missing user with the
   * foreign-key triggers switched off (session_replication_role = replica, same on PGlite and PostgreSQL),
   * and restored afterwards, byte for byte (the snapshot digest proves it).
   */
  it('an owner that resolves to null inside documents.edges[i].node nulls the whole Non-Null chain up to `data`', async () => {
    const alice = token('alice');
    const target = docId('Draft roadmap');
    const order = await postGraphQL(service.graphqlUrl, { query: '{ documents { edges { node { id } } } }' }, { token: alice });
    const index = (order.json.data.documents.edges as { node: { id: string } }[]).findIndex(({ node }) => node.id === target);
    expect(index).toBeGreaterThanOrEqual(0);

    const before = await snapshot();
    const [{ ownerId }] = (await service.database.db
      .select({ ownerId: documents.ownerId })
      .from(documents)
      .where(eq(documents.id, target))) as [{ ownerId: string }];
    const setOwner = (owner: string) =>
      service.database.db.transaction(async (tx) => {
        await tx.execute(sql`set local session_replication_role = replica`);
        // updated_at is set to itself so the restore leaves the row exactly as it was
        await tx
          .update(documents)
          .set({ ownerId: owner, updatedAt: sql`${documents.updatedAt}` })
          .where(eq(documents.id, target));
      });
    await setOwner(randomUUID());
    try {
      const query = '{ status { service } documents { edges { node { title owner { id } } } } }';
      for (const accept of [GQL, JSON_TYPE]) {
        const res = await postGraphQL(service.graphqlUrl, { query }, { token: alice, accept });
        // owner (User!) -> node (Document!) -> edges item (DocumentEdge!) -> edges ([..]!) -> documents (DocumentConnection!) -> data
        expect(res.status).toBe(200);
        expect(res.json).toEqual({
          data: null,
          errors: [
            {
              message: 'Internal server error.',
              locations: [at(query, 'owner')],
              path: ['documents', 'edges', index, 'node', 'owner'],
              extensions: { code: 'INTERNAL_SERVER_ERROR' },
            },
          ],
        });
      }
      // the same violation under a nullable ancestor (document) stops there; the sibling root field survives
      const one = `{ status { service } document(id: "${target}") { title owner { id } } }`;
      const res = await postGraphQL(service.graphqlUrl, { query: one }, { token: alice });
      expect(res.json).toEqual({
        data: { status: { service: 'latchkey' }, document: null },
        errors: [
          {
            message: 'Internal server error.',
            locations: [at(one, 'owner')],
            path: ['document', 'owner'],
            extensions: { code: 'INTERNAL_SERVER_ERROR' },
          },
        ],
      });
      // the masked message reveals nothing of the cause
      expect(res.text).not.toMatch(/non-nullable|Document\.owner|stack/i);
    } finally {
      await setOwner(ownerId);
    }
    expect(await snapshot()).toEqual(before);
  });
});

// ---------------------------------------------------------------------------------------------------------
// 6. Errors 5
// ---------------------------------------------------------------------------------------------------------

describe('6. Errors 5: business failures are payload data', () => {
  const CREATE_OP =
    'mutation Create($input: CreateDocumentInput!) { createDocument(input: $input) { document { title status } userErrors { field code message } } }';
  const PUBLISH_OP =
    'mutation Publish($id: ID!) { publishDocument(id: $id) { document { title status } userErrors { field code message } } }';

  it('a taken title is TITLE_TAKEN in userErrors (200, no `errors`, document null); nothing is written', async () => {
    await writesNothing(async () => {
      for (const accept of [GQL, JSON_TYPE]) {
        for (const title of ['Quarterly plan', 'Old pricing']) {
          const res = await gql('alice', CREATE_OP, { input: { organization: 'acme', title } }, accept);
          expect(res.status).toBe(200);
          expect(res.json).toEqual({
            data: {
              createDocument: {
                document: null,
                userErrors: [
                  {
                    field: ['input', 'title'],
                    code: 'TITLE_TAKEN',
                    message: 'Another document of this organization already has this title.',
                  },
                ],
              },
            },
          });
        }
      }
      // renaming a document to another one's title is the same business failure
      const rename = await gql(
        'alice',
        'mutation ($input: UpdateDocumentInput!) { updateDocument(input: $input) { document { id } userErrors { field code message } } }',
        { input: { id: docId('Draft roadmap'), title: 'Quarterly plan' } },
      );
      expect(rename.json).toEqual({
        data: {
          updateDocument: {
            document: null,
            userErrors: [
              { field: ['input', 'title'], code: 'TITLE_TAKEN', message: 'Another document of this organization already has this title.' },
            ],
          },
        },
      });
      // REST reports it as 409 with the same code
      const rest = await callRest(service, 'POST', '/api/documents', {
        token: token('alice'),
        body: { organization: 'acme', title: 'Quarterly plan' },
      });
      expect(rest.status).toBe(409);
      expect(rest.json).toEqual({
        statusCode: 409,
        message: 'Another document of this organization already has this title.',
        error: 'Conflict',
        code: 'TITLE_TAKEN',
        field: ['title'],
        userErrors: [{ field: ['title'], code: 'TITLE_TAKEN', message: 'Another document of this organization already has this title.' }],
      });
    });
  });

  it('publishing an archived (or already published) document is INVALID_STATE in userErrors', async () => {
    await writesNothing(async () => {
      for (const title of ['Old pricing', 'Quarterly plan']) {
        const res = await gql('alice', PUBLISH_OP, { id: docId(title) });
        expect(res.status).toBe(200);
        expect(res.json).toEqual({
          data: {
            publishDocument: {
              document: null,
              userErrors: [{ field: null, code: 'INVALID_STATE', message: 'Only drafts can be published.' }],
            },
          },
        });
      }
      const archive = await gql(
        'alice',
        'mutation ($id: ID!) { archiveDocument(id: $id) { document { id } userErrors { field code message } } }',
        { id: docId('Old pricing') },
      );
      expect(archive.json).toEqual({
        data: {
          archiveDocument: {
            document: null,
            userErrors: [{ field: null, code: 'INVALID_STATE', message: 'The document is already archived.' }],
          },
        },
      });
      const update = await gql(
        'alice',
        'mutation ($input: UpdateDocumentInput!) { updateDocument(input: $input) { document { id } userErrors { field code message } } }',
        { input: { id: docId('Old pricing'), body: 'Edited' } },
      );
      expect(update.json).toEqual({
        data: {
          updateDocument: {
            document: null,
            userErrors: [{ field: null, code: 'INVALID_STATE', message: 'Archived documents are read-only.' }],
          },
        },
      });
      const rest = await callRest(service, 'POST', `/api/documents/${docId('Old pricing')}/publish`, { token: token('alice') });
      expect(rest.status).toBe(409);
      expect(rest.json).toEqual({
        statusCode: 409,
        message: 'Only drafts can be published.',
        error: 'Conflict',
        code: 'INVALID_STATE',
        field: null,
        userErrors: [{ field: null, code: 'INVALID_STATE', message: 'Only drafts can be published.' }],
      });
    });
  });

  it('both channels occur on different calls of the same operation: data, userErrors, or errors', async () => {
    const before = await snapshot();
    const title = `Errors 5 probe ${randomUUID()}`;
    const calls: { persona: Persona; input: Record<string, unknown>; expected: unknown }[] = [
      // success: data only
      {
        persona: 'alice',
        input: { organization: 'acme', title },
        expected: { data: { createDocument: { document: { title, status: 'DRAFT' }, userErrors: [] } } },
      },
      // business failure: data, userErrors
      {
        persona: 'alice',
        input: { organization: 'acme', title },
        expected: {
          data: {
            createDocument: {
              document: null,
              userErrors: [
                {
                  field: ['input', 'title'],
                  code: 'TITLE_TAKEN',
                  message: 'Another document of this organization already has this title.',
                },
              ],
            },
          },
        },
      },
      // bad input: errors
      {
        persona: 'alice',
        input: { organization: 'Acme!', title: 'x' },
        expected: {
          data: { createDocument: null },
          errors: [
            {
              message: 'organization must be 1-63 lower-case letters, digits or hyphens.',
              locations: [at(CREATE_OP, 'createDocument(')],
              path: ['createDocument'],
              extensions: { code: 'BAD_USER_INPUT', field: ['input', 'organization'] },
            },
          ],
        },
      },
      // another tenant: errors (NOT_FOUND, existence not revealed)
      {
        persona: 'alice',
        input: { organization: 'globex', title: 'x' },
        expected: {
          data: { createDocument: null },
          errors: [
            {
              message: 'The requested record was not found.',
              locations: [at(CREATE_OP, 'createDocument(')],
              path: ['createDocument'],
              extensions: { code: 'NOT_FOUND' },
            },
          ],
        },
      },
      // not authorized to run the operation: errors (FORBIDDEN)
      {
        persona: 'bob',
        input: { organization: 'acme', title: 'x' },
        expected: {
          data: { createDocument: null },
          errors: [
            {
              message: 'You are not allowed to do this.',
              locations: [at(CREATE_OP, 'createDocument(')],
              path: ['createDocument'],
              extensions: { code: 'FORBIDDEN' },
            },
          ],
        },
      },
    ];
    let createdId: string | undefined;
    try {
      for (const { persona, input, expected } of calls) {
        const res = await gql(persona, CREATE_OP, { input });
        expect(res.status, `${persona} ${JSON.stringify(input)}`).toBe(200);
        expect(res.json, `${persona} ${JSON.stringify(input)}`).toEqual(expected);
        if (!createdId)
          createdId = (await service.database.db.select({ id: documents.id }).from(documents).where(eq(documents.title, title)))[0]?.id;
      }
      expect(createdId).toBeDefined();
    } finally {
      if (createdId) {
        const removed = await gql('alice', 'mutation ($id: ID!) { deleteDocument(id: $id) { deletedDocumentId userErrors { code } } }', {
          id: createdId,
        });
        expect(removed.json).toEqual({ data: { deleteDocument: { deletedDocumentId: createdId, userErrors: [] } } });
      }
    }
    expect(await snapshot()).toEqual(before);
  });
});
