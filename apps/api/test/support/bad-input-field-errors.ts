import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { at, b64url, docId, GQL, gql, JSON_TYPE } from './documents-suite.js';
import { COST_REPORTED } from './cost.js';

/**
 * Bad input that reaches execution (spec Errors 4, "Bad input" of the documents API): malformed ids, cursors,
 * page sizes, slugs and over-long or NUL strings, each refused at its field with BAD_USER_INPUT.
 */

/** An execution error: 200 under both media types, `data` present, one BAD_USER_INPUT error at the field's path. */
export interface ExecutionCase {
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

const DOCUMENT_BY_ID = 'query ($id: ID!) { document(id: $id) { id title } }';
const UPDATE = 'mutation ($input: UpdateDocumentInput!) { updateDocument(input: $input) { document { id } userErrors { code } } }';
export const CREATE = 'mutation ($input: CreateDocumentInput!) { createDocument(input: $input) { document { id } userErrors { code } } }';
export const LIST =
  'query ($after: String, $first: Int, $filter: DocumentFilter) { documents(after: $after, first: $first, filter: $filter) { edges { cursor } } }';

const ID_MESSAGE = 'id must be a document id (a UUID).';
export const CURSOR_MESSAGE = 'after is not a cursor from this connection.';
const FIRST_MESSAGE = 'first must be an integer from 0 to 100.';

export function executionCases(): ExecutionCase[] {
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

export async function expectExecutionError(c: ExecutionCase) {
  for (const accept of [GQL, JSON_TYPE]) {
    const res = await gql('alice', c.query, c.variables, accept);
    expect.soft(res.status, `${c.name} (${accept})`).toBe(200);
    expect.soft(res.headers.get('content-type'), c.name).toBe(`${accept}; charset=utf-8`);
    expect.soft(res.json, `${c.name} (${accept})`).toEqual({
      data: c.data,
      errors: [
        { message: c.message, locations: [at(c.query, c.locatedAt)], path: c.path, extensions: { code: 'BAD_USER_INPUT', field: c.field } },
      ],
      extensions: COST_REPORTED,
    });
  }
}
