import { documents } from '@latchkey/db';
import { describe, expect, it } from 'vitest';
import { MESSAGES, expectRestRefusal, expectGuestRefused } from './support/authorization-refusals.js';
import {
  DOCUMENT,
  LIST,
  CREATE,
  UPDATE,
  PUBLISH,
  ARCHIVE,
  DELETE,
  HOLD,
  ROLE,
  QUARTERLY,
  ROADMAP,
  service,
  demo,
  idOf,
  gql,
  rest,
  rowOf,
  roleOf,
  denialsDuring,
  useAuthorizationService,
} from './support/authorization-suite.js';
import { callRest } from './support/demo.js';
import { challengeOf, postGraphQL } from './support/service.js';
import { COST_REPORTED } from './support/cost.js';

/**
 * Spec Authorization 4, 5 and 7 for callers who are not signed in as a user: guests are refused every mutation whole (401) and every REST route; only @public fields are open to them.
 * Shared setup, operations and refusal checks: support/authorization-suite.ts, support/authorization-refusals.ts.
 */

useAuthorizationService();

describe('guests (spec Authorization 4, 5, 7)', () => {
  it('Authorization 4: a guest is refused every mutation whole before execution (401, graphql-response+json, no data, WWW-Authenticate) and every REST route with 401', async () => {
    const doc = idOf(ROADMAP);
    const operations: [string, Record<string, unknown>][] = [
      [CREATE, { input: { organization: 'acme', title: 'Guest doc' } }],
      [UPDATE, { input: { id: doc, title: 'Guest edit' } }],
      [PUBLISH, { id: doc }],
      [ARCHIVE, { id: doc }],
      [DELETE, { id: doc }],
      [HOLD, { id: doc, hold: true }],
      [ROLE, { input: { organization: 'acme', userId: demo.userId.bob, role: 'OWNER' } }],
      [DOCUMENT, { id: doc }],
      [LIST, {}],
    ];
    const { events } = await denialsDuring(async () => {
      for (const [query, variables] of operations) expectGuestRefused(await gql('guest', query, variables));
      const routes: [string, string, unknown?][] = [
        ['GET', '/api/documents'],
        ['GET', `/api/documents/${doc}`],
        ['POST', '/api/documents', { organization: 'acme', title: 'Guest doc' }],
        ['PATCH', `/api/documents/${doc}`, { title: 'Guest edit' }],
        ['PUT', `/api/documents/${doc}`, { title: 'Guest edit' }],
        ['DELETE', `/api/documents/${doc}`],
        ['POST', `/api/documents/${doc}/publish`],
        ['POST', `/api/documents/${doc}/archive`],
      ];
      for (const [method, path, body] of routes) {
        const res = await rest('guest', method, path, body);
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe(challengeOf(service, 'Bearer'));
        expect(res.json).toEqual({ statusCode: 401, message: 'Sign in to perform this operation.', error: 'Unauthorized' });
      }
    });
    // Refused at the route, before any named ability ran: nothing to publish, nothing changed.
    expect(events).toEqual([]);
    expect(await rowOf(ROADMAP)).toMatchObject({ title: ROADMAP, status: 'DRAFT', legalHold: false });
    expect(await service.database.db.select().from(documents)).toHaveLength(7);
    expect(await roleOf('bob', (await rowOf(QUARTERLY))!.organizationId)).toBe('VIEWER');
  });

  it('Authorization 7: only @public fields are open to guests; a signed-in non-user subject reads viewer but is refused documents (no 5xx)', async () => {
    const open = await gql('guest', '{ status { service version } }');
    expect(open.status).toBe(200);
    expect(open.json.data.status.service).toEqual(expect.any(String));
    // One non-public field in the selection refuses the whole operation.
    expectGuestRefused(await gql('guest', '{ status { service } viewer { subject } }'));
    expectGuestRefused(await gql('guest', '{ me { id } }'));
    expectGuestRefused(await gql('guest', '{ organization(slug: "acme") { slug } }'));

    // A valid token whose subject is no user: it is signed in, but it is nobody the policies know.
    const script = await service.token('script-user');
    const viewer = await postGraphQL(service.graphqlUrl, { query: '{ viewer { subject user { id } } me { id } }' }, { token: script });
    expect(viewer.status).toBe(200);
    expect(viewer.json).toEqual({ data: { viewer: { subject: 'script-user', user: null }, me: null }, extensions: COST_REPORTED });

    const list = await postGraphQL(service.graphqlUrl, { query: LIST }, { token: script });
    expect(list.status).toBeLessThan(500);
    if (list.json.errors) {
      expect(list.json.data).toBeNull(); // documents is non-null: the refusal reaches the root
      expect(['UNAUTHENTICATED', 'FORBIDDEN']).toContain(list.json.errors[0].extensions.code);
      expect(list.json.errors[0].path).toEqual(['documents']);
    } else {
      expect(list.json.data.documents.edges).toEqual([]);
    }
    const restList = await callRest(service, 'GET', '/api/documents', { token: script });
    expect([200, 401, 403]).toContain(restList.status);
    if (restList.status === 200) expect(restList.json.data).toEqual([]);
    const one = await callRest(service, 'GET', `/api/documents/${idOf(QUARTERLY)}`, { token: script });
    expect([401, 403, 404]).toContain(one.status);
  });

  it('Authorization 5: a named ability that denies a caller the policies see as nobody answers 401 / UNAUTHENTICATED (signing in might change it)', async () => {
    const script = await service.token('script-user');
    const { result, events } = await denialsDuring(async () => ({
      graphql: await postGraphQL(service.graphqlUrl, { query: LIST }, { token: script }),
      rest: await callRest(service, 'GET', '/api/documents', { token: script }),
    }));
    expect(result.graphql.status).toBe(200);
    expect(result.graphql.json.data).toBeNull();
    expect(result.graphql.json.errors).toEqual([
      {
        message: MESSAGES.UNAUTHENTICATED,
        locations: [{ line: 2, column: 3 }],
        path: ['documents'],
        extensions: { code: 'UNAUTHENTICATED' },
      },
    ]);
    expectRestRefusal(result.rest, 'UNAUTHENTICATED');
    expect(result.rest.json).toEqual({ statusCode: 401, message: MESSAGES.UNAUTHENTICATED, error: 'Unauthorized' });
    // spec Events 2: a guest's denial carries user null.
    expect(events).toHaveLength(2);
    for (const [event, handler] of [
      [events[0]!, 'Query.documents'],
      [events[1]!, 'GET /api/documents'],
    ] as const) {
      expect(event).toEqual({
        type: 'denied',
        policy: 'DocumentPolicy',
        ability: 'list',
        reason: 'unauthenticated',
        user: null,
        args: [],
        handler,
      });
    }
  });
});
