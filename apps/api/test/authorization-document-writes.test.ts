import { randomUUID } from 'node:crypto';
import { documents } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectGraphQLRefusal, expectRestRefusal, expectSameRefusal, expectUserError } from './support/authorization-refusals.js';
import {
  CREATE,
  UPDATE,
  PUBLISH,
  ARCHIVE,
  QUARTERLY,
  ROADMAP,
  LITIGATION,
  LAUNCH,
  PRICING,
  HANDBOOK,
  MERGER,
  service,
  demo,
  idOf,
  gql,
  rest,
  rowOf,
  useAuthorizationService,
} from './support/authorization-suite.js';
import { COST_REPORTED } from './support/cost.js';

/**
 * Spec Authorization 1, 2, 6 and 11 for createDocument, updateDocument, publishDocument and archiveDocument, called by every kind of caller on both surfaces.
 * Shared setup, operations and refusal checks: support/authorization-suite.ts, support/authorization-refusals.ts.
 */

useAuthorizationService();

describe('every mutation by guest, VIEWER, EDITOR, ADMIN/OWNER and super-admin (spec Authorization 1, 2, 4, 6, 7)', () => {
  it('Authorization 1, 2: createDocument — VIEWER 403, EDITOR/OWNER/super-admin create, another tenant 404 like a missing organization', async () => {
    // bob (VIEWER): refused at the route (@auth EDITOR) in GraphQL, by DocumentPolicy.create in REST.
    expectSameRefusal(
      await gql('bob', CREATE, { input: { organization: 'acme', title: 'By bob' } }),
      'createDocument',
      await rest('bob', 'POST', '/api/documents', { organization: 'acme', title: 'By bob' }),
      'FORBIDDEN',
    );
    // erin (EDITOR of acme) into globex, carol (ADMIN of globex) into acme: exactly like an unknown organization.
    for (const [who, slug] of [
      ['erin', 'globex'],
      ['carol', 'acme'],
    ] as const) {
      const foreign = await gql(who, CREATE, { input: { organization: slug, title: 'Sneaky' } });
      const missing = await gql(who, CREATE, { input: { organization: 'no-such-org', title: 'Sneaky' } });
      expectGraphQLRefusal(foreign, 'createDocument', 'NOT_FOUND');
      expect(foreign.json).toEqual(missing.json);
      const foreignRest = await rest(who, 'POST', '/api/documents', { organization: slug, title: 'Sneaky' });
      const missingRest = await rest(who, 'POST', '/api/documents', { organization: 'no-such-org', title: 'Sneaky' });
      expectRestRefusal(foreignRest, 'NOT_FOUND');
      expect(foreignRest.json).toEqual(missingRest.json);
    }
    // Allowed: EDITOR, OWNER in acme; ADMIN in globex; the super-admin anywhere (before hook).
    for (const [who, slug] of [
      ['erin', 'acme'],
      ['alice', 'acme'],
      ['carol', 'globex'],
      ['root', 'globex'],
    ] as const) {
      const created = await gql(who, CREATE, { input: { organization: slug, title: `GraphQL by ${who}` } });
      expect(created.json, who).toEqual({
        data: {
          createDocument: {
            document: {
              id: expect.any(String),
              title: `GraphQL by ${who}`,
              status: 'DRAFT',
              organization: { slug },
              owner: { id: demo.userId[who] },
            },
            userErrors: [],
          },
        },
        extensions: COST_REPORTED,
      });
      const viaRest = await rest(who, 'POST', '/api/documents', { organization: slug, title: `REST by ${who}` });
      expect(viaRest.status, viaRest.text).toBe(201);
      expect(viaRest.json).toMatchObject({
        title: `REST by ${who}`,
        status: 'DRAFT',
        organization: { slug },
        owner: { id: demo.userId[who] },
      });
    }
    // A business failure is data (GraphQL) / 409 (REST), never an authorization error.
    expectUserError(
      await gql('erin', CREATE, { input: { organization: 'acme', title: QUARTERLY } }),
      'createDocument',
      await rest('erin', 'POST', '/api/documents', { organization: 'acme', title: QUARTERLY }),
      'TITLE_TAKEN',
    );
    expect(await service.database.db.select().from(documents)).toHaveLength(7 + 8);
  });

  it('Authorization 1, 6: updateDocument — VIEWER 403 even on a document he can read, EDITOR/OWNER/super-admin update, another tenant 404 like a missing id, archived is INVALID_STATE', async () => {
    const quarterly = idOf(QUARTERLY);
    expectSameRefusal(
      await gql('bob', UPDATE, { input: { id: quarterly, title: 'By bob' } }),
      'updateDocument',
      await rest('bob', 'PATCH', `/api/documents/${quarterly}`, { title: 'By bob' }),
      'FORBIDDEN',
    );
    expectRestRefusal(await rest('bob', 'PUT', `/api/documents/${quarterly}`, { title: 'By bob' }), 'FORBIDDEN');
    // The route check runs before the resolver: bob's answer is the same whatever the id (nothing is revealed).
    const bobHidden = await gql('bob', UPDATE, { input: { id: idOf(ROADMAP), title: 'By bob' } });
    const bobMissing = await gql('bob', UPDATE, { input: { id: randomUUID(), title: 'By bob' } });
    expectGraphQLRefusal(bobHidden, 'updateDocument', 'FORBIDDEN');
    expect(bobHidden.json).toEqual(bobMissing.json);
    const bobHiddenRest = await rest('bob', 'PATCH', `/api/documents/${idOf(ROADMAP)}`, { title: 'By bob' });
    expectRestRefusal(bobHiddenRest, 'FORBIDDEN');
    expect(bobHiddenRest.json).toEqual((await rest('bob', 'PATCH', `/api/documents/${randomUUID()}`, { title: 'By bob' })).json);

    // carol (ADMIN of globex passes the route check) on an acme document: NOT_FOUND, exactly like a random id.
    const foreign = await gql('carol', UPDATE, { input: { id: quarterly, title: 'By carol' } });
    const missing = await gql('carol', UPDATE, { input: { id: randomUUID(), title: 'By carol' } });
    expectGraphQLRefusal(foreign, 'updateDocument', 'NOT_FOUND');
    expect(foreign.json).toEqual(missing.json);
    const foreignRest = await rest('carol', 'PATCH', `/api/documents/${quarterly}`, { title: 'By carol' });
    const missingRest = await rest('carol', 'PATCH', `/api/documents/${randomUUID()}`, { title: 'By carol' });
    expectRestRefusal(foreignRest, 'NOT_FOUND');
    expect(foreignRest.json).toEqual(missingRest.json);
    expect((await rowOf(QUARTERLY))!.title).toBe(QUARTERLY);

    for (const who of ['erin', 'alice', 'root'] as const) {
      const graphql = await gql(who, UPDATE, { input: { id: quarterly, body: `GraphQL body by ${who}` } });
      expect(graphql.json, who).toEqual({
        data: { updateDocument: { document: { id: quarterly, title: QUARTERLY, body: `GraphQL body by ${who}` }, userErrors: [] } },
        extensions: COST_REPORTED,
      });
      const viaRest = await rest(who, 'PATCH', `/api/documents/${quarterly}`, { body: `REST body by ${who}` });
      expect(viaRest.status, viaRest.text).toBe(200);
      expect(viaRest.json).toMatchObject({ id: quarterly, body: `REST body by ${who}` });
    }
    expectUserError(
      await gql('erin', UPDATE, { input: { id: idOf(PRICING), body: 'x' } }),
      'updateDocument',
      await rest('erin', 'PATCH', `/api/documents/${idOf(PRICING)}`, { body: 'x' }),
      'INVALID_STATE',
    );
  });

  it('Authorization 11: publishDocument — unverified EDITOR 403, FREE plan 403, VIEWER 403 / 404 on a draft, OWNER publishes, archived is INVALID_STATE', async () => {
    const roadmap = idOf(ROADMAP);
    // erin: unverified e-mail (refused at the route in GraphQL, by DocumentPolicy.publish in REST).
    expectSameRefusal(
      await gql('erin', PUBLISH, { id: roadmap }),
      'publishDocument',
      await rest('erin', 'POST', `/api/documents/${roadmap}/publish`),
      'FORBIDDEN',
    );
    // carol: ADMIN with a verified e-mail, but globex is on the FREE plan.
    const merger = idOf(MERGER);
    expectSameRefusal(
      await gql('carol', PUBLISH, { id: merger }),
      'publishDocument',
      await rest('carol', 'POST', `/api/documents/${merger}/publish`),
      'FORBIDDEN',
    );
    // bob: a VIEWER cannot publish what he sees, and a draft is hidden from him.
    const quarterly = idOf(QUARTERLY);
    expectSameRefusal(
      await gql('bob', PUBLISH, { id: quarterly }),
      'publishDocument',
      await rest('bob', 'POST', `/api/documents/${quarterly}/publish`),
      'FORBIDDEN',
    );
    expectSameRefusal(
      await gql('bob', PUBLISH, { id: roadmap }),
      'publishDocument',
      await rest('bob', 'POST', `/api/documents/${roadmap}/publish`),
      'NOT_FOUND',
    );
    // carol on an acme draft: like a missing id.
    const foreign = await gql('carol', PUBLISH, { id: roadmap });
    expectGraphQLRefusal(foreign, 'publishDocument', 'NOT_FOUND');
    expect(foreign.json).toEqual((await gql('carol', PUBLISH, { id: randomUUID() })).json);
    expect((await rowOf(ROADMAP))!.status).toBe('DRAFT');
    expect((await rowOf(MERGER))!.status).toBe('DRAFT');

    // alice: OWNER, verified, PRO organization.
    expect((await gql('alice', PUBLISH, { id: roadmap })).json).toEqual({
      data: { publishDocument: { document: { id: roadmap, status: 'PUBLISHED' }, userErrors: [] } },
      extensions: COST_REPORTED,
    });
    await service.database.db.update(documents).set({ status: 'DRAFT' }).where(eq(documents.id, roadmap));
    const viaRest = await rest('alice', 'POST', `/api/documents/${roadmap}/publish`);
    expect(viaRest.status, viaRest.text).toBe(200);
    expect(viaRest.json).toMatchObject({ id: roadmap, status: 'PUBLISHED' });

    // Only drafts: an archived (or already published) document is a business failure, not an error.
    for (const title of [PRICING, QUARTERLY]) {
      const graphql = await gql('alice', PUBLISH, { id: idOf(title) });
      expect(graphql.json).toEqual({
        data: {
          publishDocument: {
            document: null,
            userErrors: [{ field: null, message: 'Only drafts can be published.', code: 'INVALID_STATE' }],
          },
        },
        extensions: COST_REPORTED,
      });
      expectUserError(graphql, 'publishDocument', await rest('alice', 'POST', `/api/documents/${idOf(title)}/publish`), 'INVALID_STATE');
    }
    expect((await rowOf(PRICING))!.status).toBe('ARCHIVED');

    // The super-admin passes the before hook, FREE plan or not.
    expect((await gql('root', PUBLISH, { id: merger })).json.data.publishDocument).toEqual({
      document: { id: merger, status: 'PUBLISHED' },
      userErrors: [],
    });
  });

  it('Authorization 1, 6: archiveDocument — VIEWER 403, EDITOR/OWNER/super-admin archive, another tenant 404, already archived is INVALID_STATE', async () => {
    const quarterly = idOf(QUARTERLY);
    expectSameRefusal(
      await gql('bob', ARCHIVE, { id: quarterly }),
      'archiveDocument',
      await rest('bob', 'POST', `/api/documents/${quarterly}/archive`),
      'FORBIDDEN',
    );
    const foreign = await gql('carol', ARCHIVE, { id: quarterly });
    expectGraphQLRefusal(foreign, 'archiveDocument', 'NOT_FOUND');
    expect(foreign.json).toEqual((await gql('carol', ARCHIVE, { id: randomUUID() })).json);
    const foreignRest = await rest('carol', 'POST', `/api/documents/${quarterly}/archive`);
    expectRestRefusal(foreignRest, 'NOT_FOUND');
    expect(foreignRest.json).toEqual((await rest('carol', 'POST', `/api/documents/${randomUUID()}/archive`)).json);
    expect((await rowOf(QUARTERLY))!.status).toBe('PUBLISHED');

    const cases = [
      ['erin', ROADMAP, QUARTERLY],
      ['alice', LAUNCH, LITIGATION],
      ['root', HANDBOOK, MERGER],
    ] as const;
    for (const [who, viaGraphQL, viaRest] of cases) {
      expect((await gql(who, ARCHIVE, { id: idOf(viaGraphQL) })).json, who).toEqual({
        data: { archiveDocument: { document: { id: idOf(viaGraphQL), status: 'ARCHIVED' }, userErrors: [] } },
        extensions: COST_REPORTED,
      });
      const res = await rest(who, 'POST', `/api/documents/${idOf(viaRest)}/archive`);
      expect(res.status, res.text).toBe(200);
      expect(res.json).toMatchObject({ id: idOf(viaRest), status: 'ARCHIVED' });
    }
    expectUserError(
      await gql('erin', ARCHIVE, { id: idOf(PRICING) }),
      'archiveDocument',
      await rest('erin', 'POST', `/api/documents/${idOf(PRICING)}/archive`),
      'INVALID_STATE',
    );
  });
});
