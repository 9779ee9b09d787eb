import { randomUUID } from 'node:crypto';
import { documents } from '@latchkey/db';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { CURSOR_MESSAGE } from './support/bad-input-field-errors.js';
import { at, docId, GQL, gql, JSON_TYPE, service, snapshot, token, useDocumentsService } from './support/documents-suite.js';
import { postGraphQL } from './support/service.js';
import { COST_REPORTED } from './support/cost.js';

/**
 * Spec Errors 1-3 on the documents API: partial success (data beside errors), and where a failing field's null
 * lands: on the field when it is nullable, on the nearest nullable ancestor (up to `data`) when it is Non-Null,
 * inside lists of Non-Null items too.
 */

useDocumentsService();

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
        extensions: COST_REPORTED,
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
        extensions: COST_REPORTED,
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
        extensions: COST_REPORTED,
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
          extensions: COST_REPORTED,
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
        extensions: COST_REPORTED,
      });
      // the masked message reveals nothing of the cause
      expect(res.text).not.toMatch(/non-nullable|Document\.owner|stack/i);
    } finally {
      await setOwner(ownerId);
    }
    expect(await snapshot()).toEqual(before);
  });
});
