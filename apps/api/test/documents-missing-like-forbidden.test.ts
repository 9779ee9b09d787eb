import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { callRest } from './support/demo.js';
import { at, docId, GQL, gql, JSON_TYPE, service, token, useDocumentsService, writesNothing } from './support/documents-suite.js';
import { COST_REPORTED } from './support/cost.js';

/**
 * Spec Authorization 6 (and 12) on the documents API: a well-formed id that does not exist answers exactly like
 * the id of a document the caller may not see, over GraphQL and REST, and nothing is written.
 */

useDocumentsService();

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
            extensions: COST_REPORTED,
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
