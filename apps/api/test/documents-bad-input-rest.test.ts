import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { callRest } from './support/demo.js';
import { b64url, demo, docId, MAX_BODY_BYTES, service, token, useDocumentsService, writesNothing } from './support/documents-suite.js';

/**
 * Spec Errors 4 over REST: malformed ids, query parameters and bodies are answered 400/405/404/413/415 with the
 * error body, never a 5xx, and write nothing. GraphQL's side is documents-bad-input-graphql.test.ts.
 */

useDocumentsService();

describe('1. Bad input gets BAD_USER_INPUT or a 4xx, never 5xx, and writes nothing', () => {
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
