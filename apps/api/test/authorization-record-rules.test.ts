import { randomUUID } from 'node:crypto';
import { users } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  MESSAGES,
  POLICY_NAMES,
  expectGraphQLRefusal,
  expectRestRefusal,
  expectSameRefusal,
  expectGuestRefused,
} from './support/authorization-refusals.js';
import {
  DOCUMENT,
  UPDATE,
  ARCHIVE,
  DELETE,
  HOLD,
  QUARTERLY,
  LITIGATION,
  HANDBOOK,
  service,
  demo,
  idOf,
  gql,
  rest,
  rowOf,
  denialsDuring,
  useAuthorizationService,
} from './support/authorization-suite.js';
import { COST_REPORTED } from './support/cost.js';

/**
 * Spec Authorization 1-7: where the route check runs, record- and field-level rules (one code for REST and GraphQL), 401 versus 403, another tenant like a missing record, and role inheritance.
 * Shared setup, operations and refusal checks: support/authorization-suite.ts, support/authorization-refusals.ts.
 */

useAuthorizationService();

describe('record, field and environment rules', () => {
  it('Authorization 1: the route check runs before the resolver, from the caller alone (AccountPolicy.holdsRole, no record loaded)', async () => {
    const { result, events } = await denialsDuring(async () => ({
      graphql: await gql('bob', UPDATE, { input: { id: randomUUID(), title: 'x' } }),
      rest: await rest('bob', 'PATCH', `/api/documents/${randomUUID()}`, { title: 'x' }),
    }));
    expectSameRefusal(result.graphql, 'updateDocument', result.rest, 'FORBIDDEN');
    const bob = expect.objectContaining({ id: demo.userId.bob });
    expect(events).toEqual([
      {
        type: 'denied',
        policy: 'AccountPolicy',
        ability: 'holdsRole',
        reason: 'forbidden',
        user: bob,
        args: ['EDITOR'],
        handler: 'Mutation.updateDocument',
      },
      {
        type: 'denied',
        policy: 'AccountPolicy',
        ability: 'holdsRole',
        reason: 'forbidden',
        user: bob,
        args: ['EDITOR'],
        handler: 'PATCH /api/documents/:id',
      },
    ]);
  });

  it('Authorization 2: the record-level rule is the same code for REST and GraphQL (same ability, same record, different handler)', async () => {
    const quarterly = idOf(QUARTERLY);
    const { result, events } = await denialsDuring(async () => ({
      graphql: await gql('erin', DELETE, { id: quarterly }),
      rest: await rest('erin', 'DELETE', `/api/documents/${quarterly}`),
    }));
    expectSameRefusal(result.graphql, 'deleteDocument', result.rest, 'FORBIDDEN');
    expect(events.map((e) => [e.policy, e.ability, e.handler])).toEqual([
      ['DocumentPolicy', 'delete', 'Mutation.deleteDocument'],
      ['DocumentPolicy', 'delete', 'DELETE /api/documents/:id'],
    ]);
    for (const event of events) expect((event.args[0] as { id: string }).id).toBe(quarterly);
  });

  it('Authorization 3, 12, 13: User.email of a colleague is null with FORBIDDEN at its path (once per row) for a VIEWER, visible to the OWNER, own e-mail always', async () => {
    const query = '{ documents(first: 100) { edges { node { title owner { displayName email } } } } }';
    const bob = await gql('bob', query);
    expect(bob.status).toBe(200);
    const edges = bob.json.data.documents.edges as { node: { title: string; owner: { displayName: string; email: string | null } } }[];
    expect(edges.map((e) => e.node.title).sort()).toEqual([LITIGATION, QUARTERLY].sort());
    for (const { node } of edges) expect(node.owner).toEqual({ displayName: 'Alice', email: null });
    expect(bob.json.errors).toHaveLength(edges.length);
    const paths = (bob.json.errors as { path: (string | number)[] }[]).map((e) => e.path).sort((x, y) => Number(x[2]) - Number(y[2]));
    expect(paths).toEqual(edges.map((_, i) => ['documents', 'edges', i, 'node', 'owner', 'email']));
    for (const error of bob.json.errors) expect(error).toMatchObject({ message: MESSAGES.FORBIDDEN, extensions: { code: 'FORBIDDEN' } });
    expect(bob.text).not.toMatch(POLICY_NAMES);
    expect(bob.text).not.toContain('alice@acme.test');

    // alice is OWNER (ADMIN and above) of acme: her colleagues' e-mails are hers to see.
    const alice = await gql('alice', query);
    expect(alice.json.errors).toBeUndefined();
    const owners = new Map(
      (alice.json.data.documents.edges as { node: { owner: { displayName: string; email: string } } }[]).map((e) => [
        e.node.owner.displayName,
        e.node.owner.email,
      ]),
    );
    expect(Object.fromEntries(owners)).toEqual({ Alice: 'alice@acme.test', Erin: 'erin@acme.test' });

    // Everybody sees their own.
    for (const who of ['alice', 'bob', 'erin', 'carol', 'root'] as const) {
      const me = await gql(who, '{ me { email } }');
      expect(me.json, who).toEqual({
        data: {
          me: {
            email: (await service.database.db.select({ email: users.email }).from(users).where(eq(users.id, demo.userId[who])))[0]!.email,
          },
        },
        extensions: COST_REPORTED,
      });
    }
    // Field level on documents too: internalNotes for the VIEWER is null + FORBIDDEN, the rest of the document intact.
    const notes = await gql('bob', `query ($id: ID!) { document(id: $id) { title internalNotes } }`, { id: idOf(QUARTERLY) });
    expect(notes.json.data).toEqual({ document: { title: QUARTERLY, internalNotes: null } });
    expect(notes.json.errors).toMatchObject([{ path: ['document', 'internalNotes'], extensions: { code: 'FORBIDDEN' } }]);
    // REST applies the same field rule (the schema's @can): the VIEWER's body leaves the field out, the EDITOR's has it.
    const viewerBody = await rest('bob', 'GET', `/api/documents/${idOf(QUARTERLY)}`);
    expect(viewerBody.status).toBe(200);
    expect(viewerBody.json).toMatchObject({ title: QUARTERLY });
    expect(viewerBody.json).not.toHaveProperty('internalNotes');
    const editorBody = await rest('erin', 'GET', `/api/documents/${idOf(QUARTERLY)}`);
    expect(editorBody.json).toHaveProperty('internalNotes');
  });

  it('Authorization 4: no user -> 401, a known user without permission -> 403 (same operation, same record, both surfaces)', async () => {
    const quarterly = idOf(QUARTERLY);
    expectGuestRefused(await gql('guest', ARCHIVE, { id: quarterly }));
    expectRestRefusal(await rest('guest', 'POST', `/api/documents/${quarterly}/archive`), 'UNAUTHENTICATED');
    expectSameRefusal(
      await gql('bob', ARCHIVE, { id: quarterly }),
      'archiveDocument',
      await rest('bob', 'POST', `/api/documents/${quarterly}/archive`),
      'FORBIDDEN',
    );
  });

  it("Authorization 6: another tenant's document answers exactly like a missing one (read, update, delete; whole bodies compared)", async () => {
    const acmeDoc = idOf(QUARTERLY);
    const globexDoc = idOf(HANDBOOK);
    for (const [who, foreignId] of [
      ['carol', acmeDoc],
      ['alice', globexDoc],
      ['bob', globexDoc],
      ['erin', globexDoc],
    ] as const) {
      const missingId = randomUUID();
      const pairs: [string, Record<string, unknown>, Record<string, unknown>, string][] = [
        [DOCUMENT, { id: foreignId }, { id: missingId }, 'document'],
        [UPDATE, { input: { id: foreignId, title: 'x' } }, { input: { id: missingId, title: 'x' } }, 'updateDocument'],
        [DELETE, { id: foreignId }, { id: missingId }, 'deleteDocument'],
      ];
      for (const [query, foreignVars, missingVars, field] of pairs) {
        const foreign = await gql(who, query, foreignVars);
        const missing = await gql(who, query, missingVars);
        // A VIEWER is refused updateDocument/deleteDocument at the route, for every id alike; everyone else sees NOT_FOUND.
        const routeRefused = who === 'bob' && field !== 'document';
        expectGraphQLRefusal(foreign, field, routeRefused ? 'FORBIDDEN' : 'NOT_FOUND');
        expect(foreign.json, `${who} ${field}`).toEqual(missing.json);
      }
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { title: 'x' }],
        ['DELETE', undefined],
      ] as const) {
        const foreign = await rest(who, method, `/api/documents/${foreignId}`, body);
        const missing = await rest(who, method, `/api/documents/${missingId}`, body);
        // The REST routes carry the same route-level marks: bob's PATCH/DELETE are refused before any record is read.
        const routeRefused = who === 'bob' && method !== 'GET';
        expectRestRefusal(foreign, routeRefused ? 'FORBIDDEN' : 'NOT_FOUND');
        expect(foreign.json, `${who} ${method}`).toEqual(missing.json);
        if (!routeRefused)
          expect(foreign.json).toEqual({ statusCode: 404, message: MESSAGES.NOT_FOUND, error: 'Not Found', code: 'NOT_FOUND' });
      }
    }
    // Nothing was changed.
    expect((await rowOf(QUARTERLY))!.title).toBe(QUARTERLY);
    expect((await rowOf(HANDBOOK))!.title).toBe(HANDBOOK);
    // Organizations alike.
    const org = '{ organization(slug: "acme") { slug } }';
    expect((await gql('carol', org)).json).toEqual({ ...(await gql('carol', '{ organization(slug: "nope") { slug } }')).json });
  });

  it('Authorization 7: a role grants itself and every role below it (OWNER passes @auth(role: ADMIN) and EDITOR; ADMIN passes EDITOR)', async () => {
    // alice holds only OWNER, carol only ADMIN: both pass the EDITOR and ADMIN route checks.
    expect((await gql('alice', HOLD, { id: idOf(QUARTERLY), hold: true })).json.data.setLegalHold.document.legalHold).toBe(true);
    expect(
      (await gql('alice', UPDATE, { input: { id: idOf(QUARTERLY), body: 'by the OWNER' } })).json.data.updateDocument.userErrors,
    ).toEqual([]);
    expect(
      (await gql('carol', UPDATE, { input: { id: idOf(HANDBOOK), body: 'by the ADMIN' } })).json.data.updateDocument.userErrors,
    ).toEqual([]);
    expect((await gql('carol', HOLD, { id: idOf(HANDBOOK), hold: true })).json.data.setLegalHold.document.legalHold).toBe(true);
    // erin (EDITOR) does not reach ADMIN; bob (VIEWER) does not reach EDITOR.
    expectGraphQLRefusal(await gql('erin', HOLD, { id: idOf(QUARTERLY), hold: false }), 'setLegalHold', 'FORBIDDEN');
    expectGraphQLRefusal(await gql('bob', ARCHIVE, { id: idOf(QUARTERLY) }), 'archiveDocument', 'FORBIDDEN');
  });
});
