import { randomUUID } from 'node:crypto';
import { documents } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { callRest, type Persona } from './support/demo.js';
import { at, docId, GQL, gql, JSON_TYPE, service, snapshot, token, useDocumentsService, writesNothing } from './support/documents-suite.js';
import { COST_REPORTED } from './support/cost.js';

/**
 * Spec Errors 5 on the documents API: a business failure (a taken title, a document in the wrong state) is
 * payload data (`userErrors`, 200, no `errors`); REST reports it as 409 with the same code.
 */

useDocumentsService();

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
            extensions: COST_REPORTED,
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
        extensions: COST_REPORTED,
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
          extensions: COST_REPORTED,
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
        extensions: COST_REPORTED,
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
        extensions: COST_REPORTED,
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
        expected: { data: { createDocument: { document: { title, status: 'DRAFT' }, userErrors: [] } }, extensions: COST_REPORTED },
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
          extensions: COST_REPORTED,
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
          extensions: COST_REPORTED,
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
          extensions: COST_REPORTED,
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
          extensions: COST_REPORTED,
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
        expect(removed.json).toEqual({
          data: { deleteDocument: { deletedDocumentId: createdId, userErrors: [] } },
          extensions: COST_REPORTED,
        });
      }
    }
    expect(await snapshot()).toEqual(before);
  });
});
