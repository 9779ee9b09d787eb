import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CURSOR_MESSAGE, executionCases, expectExecutionError, LIST } from './support/bad-input-field-errors.js';
import { expectRequestError, requestCases } from './support/bad-input-request-errors.js';
import { callRest } from './support/demo.js';
import { at, b64url, docId, GQL, gql, JSON_TYPE, service, token, useDocumentsService, writesNothing } from './support/documents-suite.js';

/**
 * Spec Errors 4 over GraphQL: bad input gets BAD_USER_INPUT (at the field, 200) or a request error (no data,
 * 400 / 200 by media type), never a 5xx, and writes nothing. REST's side is documents-bad-input-rest.test.ts.
 */

useDocumentsService();

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
});
