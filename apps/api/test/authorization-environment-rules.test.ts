import { documents, users } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { MESSAGES, expectGraphQLRefusal, expectRestRefusal, expectSameRefusal } from './support/authorization-refusals.js';
import {
  DOCUMENT,
  DOCUMENT_CAN,
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
  LITIGATION,
  LAUNCH,
  ACME_TITLES,
  GLOBEX_TITLES,
  service,
  demo,
  idOf,
  gql,
  rest,
  rowOf,
  denialsDuring,
  titlesOf,
  restTitlesOf,
  useAuthorizationService,
} from './support/authorization-suite.js';
import { requestStatementsDuring } from './support/cost.js';
import type { Persona } from './support/demo.js';
import { COST_REPORTED } from './support/cost.js';

/**
 * Spec Authorization 8-15: legal hold, suspended users, per-request state and time, viewerCan, embargoes, private caching and lists filtered in SQL.
 * Shared setup, operations and refusal checks: support/authorization-suite.ts, support/authorization-refusals.ts.
 */

useAuthorizationService();

describe('record, field and environment rules', () => {
  it('Authorization 8: legal hold is binding — the super-admin\'s delete of "Litigation memo" is FORBIDDEN / 403 and the row stays', async () => {
    const litigation = idOf(LITIGATION);
    const { result, events } = await denialsDuring(async () => ({
      graphql: await gql('root', DELETE, { id: litigation }),
      rest: await rest('root', 'DELETE', `/api/documents/${litigation}`),
    }));
    expectSameRefusal(result.graphql, 'deleteDocument', result.rest, 'FORBIDDEN');
    expect(result.rest.json).toEqual({ statusCode: 403, message: MESSAGES.FORBIDDEN, error: 'Forbidden' });
    expect(events.map((e) => `${e.policy}.${e.ability}`)).toEqual(['DocumentPolicy.delete', 'DocumentPolicy.delete']);
    expect(await rowOf(LITIGATION)).toMatchObject({ id: litigation, legalHold: true });
    // The OWNER neither; and viewerCan agrees for both.
    expectSameRefusal(
      await gql('alice', DELETE, { id: litigation }),
      'deleteDocument',
      await rest('alice', 'DELETE', `/api/documents/${litigation}`),
      'FORBIDDEN',
    );
    for (const who of ['root', 'alice'] as const) {
      expect((await gql(who, DOCUMENT_CAN, { id: litigation })).json.data.document.viewerCan.delete).toBe(false);
      expect((await rest(who, 'GET', `/api/documents/${litigation}`)).json.viewerCan.delete).toBe(false);
    }
    expect(await rowOf(LITIGATION)).toBeDefined();
  });

  it('Authorization 8: a suspended user with a still-valid token is refused everything (before hook), GraphQL FORBIDDEN / REST 403', async () => {
    // alice's token was minted in beforeEach, before the suspension: it stays valid.
    await service.database.db.update(users).set({ suspended: true }).where(eq(users.id, demo.userId.alice));
    try {
      const roadmap = idOf(ROADMAP);
      const me = await gql('alice', '{ me { email } }');
      expectGraphQLRefusal(me, 'me', 'FORBIDDEN');
      const list = await gql('alice', LIST);
      expect(list.json.data).toBeNull();
      expect(list.json.errors).toMatchObject([{ path: ['documents'], extensions: { code: 'FORBIDDEN' } }]);
      expectRestRefusal(await rest('alice', 'GET', '/api/documents'), 'FORBIDDEN');
      // Every mutation, even those an unsuspended OWNER passes.
      for (const [query, variables, field] of [
        [CREATE, { input: { organization: 'acme', title: 'Suspended' } }, 'createDocument'],
        [UPDATE, { input: { id: roadmap, title: 'Suspended' } }, 'updateDocument'],
        [PUBLISH, { id: roadmap }, 'publishDocument'],
        [ARCHIVE, { id: roadmap }, 'archiveDocument'],
        [DELETE, { id: roadmap }, 'deleteDocument'],
        [HOLD, { id: roadmap, hold: true }, 'setLegalHold'],
        [ROLE, { input: { organization: 'acme', userId: demo.userId.bob, role: 'ADMIN' } }, 'changeMemberRole'],
      ] as const) {
        expectGraphQLRefusal(await gql('alice', query, variables), field, 'FORBIDDEN');
      }
      // REST: reading one record is hidden (404, as for a missing id); every change is refused at the route (403).
      expectRestRefusal(await rest('alice', 'GET', `/api/documents/${roadmap}`), 'NOT_FOUND');
      for (const [method, path, body] of [
        ['POST', '/api/documents', { organization: 'acme', title: 'Suspended' }],
        ['PATCH', `/api/documents/${roadmap}`, { title: 'Suspended' }],
        ['POST', `/api/documents/${roadmap}/publish`],
        ['POST', `/api/documents/${roadmap}/archive`],
        ['DELETE', `/api/documents/${roadmap}`],
      ] as const) {
        const res = await rest('alice', method, path, body);
        expect(res.status, `${method} ${path}`).toBe(403);
        expectRestRefusal(res, 'FORBIDDEN');
      }
      expect(await rowOf(ROADMAP)).toMatchObject({ title: ROADMAP, status: 'DRAFT', legalHold: false });
      expect(await service.database.db.select().from(documents)).toHaveLength(7);
    } finally {
      await service.database.db.update(users).set({ suspended: false }).where(eq(users.id, demo.userId.alice));
    }
    // Restored: the same token works again.
    expect((await gql('alice', '{ me { email } }')).json).toEqual({
      data: { me: { email: 'alice@acme.test' } },
      extensions: COST_REPORTED,
    });
  });

  it('Authorization 8: a suspended user cannot read their account through viewer.user either (me refuses it with FORBIDDEN)', async () => {
    await service.database.db.update(users).set({ suspended: true }).where(eq(users.id, demo.userId.alice));
    try {
      expectGraphQLRefusal(await gql('alice', '{ me { displayName } }'), 'me', 'FORBIDDEN');
      // The token's own claims may still be echoed; the account (name, roles, organizations) may not.
      const viewer = await gql('alice', '{ viewer { subject user { displayName memberships { role organization { slug name plan } } } } }');
      expect(viewer.status).toBeLessThan(500);
      expect(JSON.stringify(viewer.json.data ?? null)).not.toMatch(/Alice|OWNER|acme|Acme|PRO/);
      expect((viewer.json.errors ?? []).map((e: { extensions: { code: string } }) => e.extensions.code)).toContain('FORBIDDEN');
    } finally {
      await service.database.db.update(users).set({ suspended: false }).where(eq(users.id, demo.userId.alice));
    }
  });

  it('Authorization 9, 11: abilities are singletons fed per-request state — the time of the decision is an argument (DocumentPolicy.view sees the record and "now")', async () => {
    const before = Date.now();
    const { result, events } = await denialsDuring(() => gql('bob', DOCUMENT, { id: idOf(LAUNCH) }));
    expectGraphQLRefusal(result, 'document', 'NOT_FOUND');
    expect(events).toHaveLength(1);
    const [doc, now] = events[0]!.args as [{ id: string }, Date];
    expect(events[0]).toMatchObject({ policy: 'DocumentPolicy', ability: 'view', reason: 'forbidden', handler: 'Query.document' });
    expect(doc.id).toBe(idOf(LAUNCH));
    expect(now).toBeInstanceOf(Date);
    expect(now.getTime()).toBeGreaterThanOrEqual(before);
    expect(now.getTime()).toBeLessThanOrEqual(Date.now());
  });

  it('Authorization 10: viewerCan answers with the abilities the endpoints use, in GraphQL and REST alike, and publishes nothing', async () => {
    const { events } = await denialsDuring(async () => {
      for (const who of ['alice', 'bob', 'erin', 'carol', 'root'] as const) {
        for (const title of [...ACME_TITLES, ...GLOBEX_TITLES]) {
          const graphql = await gql(who, DOCUMENT_CAN, { id: idOf(title) });
          const viaRest = await rest(who, 'GET', `/api/documents/${idOf(title)}`);
          if (graphql.json.data.document === null) {
            expectSameRefusal(graphql, 'document', viaRest, 'NOT_FOUND');
            continue;
          }
          expect(viaRest.status).toBe(200);
          expect(viaRest.json.viewerCan, `${who} ${title}`).toEqual(graphql.json.data.document.viewerCan);
        }
      }
    });
    // The only events are the hidden documents' view denials: no `can` check published anything.
    expect(events.every((e) => e.ability === 'view')).toBe(true);
    const { events: none } = await denialsDuring(async () => {
      await gql('bob', DOCUMENT_CAN, { id: idOf(QUARTERLY) });
      await rest('bob', 'GET', `/api/documents/${idOf(QUARTERLY)}`);
      await gql('erin', DOCUMENT_CAN, { id: idOf(ROADMAP) });
      await rest('root', 'GET', `/api/documents/${idOf(LITIGATION)}`);
      await rest('bob', 'GET', '/api/documents');
    });
    expect(none).toEqual([]);
    // ... and the endpoints agree with what viewerCan said.
    expect((await gql('erin', DOCUMENT_CAN, { id: idOf(ROADMAP) })).json.data.document.viewerCan).toEqual({
      update: true,
      publish: false,
      archive: true,
      delete: true,
      setLegalHold: false,
    });
    expectGraphQLRefusal(await gql('erin', PUBLISH, { id: idOf(ROADMAP) }), 'publishDocument', 'FORBIDDEN');
    expectGraphQLRefusal(await gql('erin', HOLD, { id: idOf(ROADMAP), hold: true }), 'setLegalHold', 'FORBIDDEN');
    expect((await gql('erin', ARCHIVE, { id: idOf(ROADMAP) })).json.data.archiveDocument.userErrors).toEqual([]);
    expect((await gql('alice', DOCUMENT_CAN, { id: idOf(QUARTERLY) })).json.data.document.viewerCan.publish).toBe(true);
  });

  it('Authorization 11: the embargo is honoured by time — hidden from the VIEWER until the instant passes, visible to the EDITOR throughout', async () => {
    const quarterly = idOf(QUARTERLY);
    // An instant far ahead while the refusals are checked (no race with a busy machine), then one just ahead,
    // waited for by asking until it has passed: the passing of time is what releases it, not a computed sleep.
    const embargo = (until: Date) => service.database.db.update(documents).set({ embargoUntil: until }).where(eq(documents.id, quarterly));
    let until = new Date(Date.now() + 3_600_000);
    await embargo(until);

    expectSameRefusal(
      await gql('bob', DOCUMENT, { id: quarterly }),
      'document',
      await rest('bob', 'GET', `/api/documents/${quarterly}`),
      'NOT_FOUND',
    );
    expect(titlesOf(await gql('bob', LIST))).toEqual([LITIGATION]);
    expect(restTitlesOf(await rest('bob', 'GET', '/api/documents'))).toEqual([LITIGATION]);
    expect((await gql('erin', DOCUMENT, { id: quarterly })).json.data.document.title).toBe(QUARTERLY);
    expect((await rest('erin', 'GET', `/api/documents/${quarterly}`)).json.embargoUntil).toBe(until.toISOString());

    until = new Date(Date.now() + 500);
    await embargo(until);
    expect((await rest('erin', 'GET', `/api/documents/${quarterly}`)).json.embargoUntil).toBe(until.toISOString());
    await expect
      .poll(async () => (await rest('bob', 'GET', `/api/documents/${quarterly}`)).status, { timeout: 20_000, interval: 50 })
      .toBe(200);
    expect(Date.now()).toBeGreaterThanOrEqual(until.getTime());
    expect((await gql('bob', DOCUMENT, { id: quarterly })).json).toEqual({
      data: { document: { id: quarterly, title: QUARTERLY, status: 'PUBLISHED' } },
      extensions: COST_REPORTED,
    });
    expect((await rest('bob', 'GET', `/api/documents/${quarterly}`)).status).toBe(200);
    expect(titlesOf(await gql('bob', LIST))).toEqual([LITIGATION, QUARTERLY].sort());
    expect(restTitlesOf(await rest('bob', 'GET', '/api/documents'))).toEqual([LITIGATION, QUARTERLY].sort());
  });

  it('Authorization 14: answers to a signed-in caller are private, no-store with Vary: Authorization (/graphql and /api/documents)', async () => {
    const responses = [
      await gql('bob', LIST),
      await gql('bob', DELETE, { id: idOf(QUARTERLY) }),
      await rest('bob', 'GET', '/api/documents'),
      await rest('bob', 'GET', `/api/documents/${idOf(QUARTERLY)}`),
      await rest('bob', 'GET', `/api/documents/${idOf(ROADMAP)}`), // 404
      await rest('bob', 'DELETE', `/api/documents/${idOf(QUARTERLY)}`), // 403
    ];
    for (const res of responses)
      expect(res.headers.get('vary') ?? '', `${res.status} ${res.text.slice(0, 80)}`).toMatch(/\bAuthorization\b/i);
    for (const res of responses)
      expect(res.headers.get('cache-control'), `${res.status} ${res.text.slice(0, 80)}`).toBe('private, no-store');
    // Guests' answers are not stored either.
    expect((await gql('guest', '{ status { service } }')).headers.get('cache-control')).toMatch(/no-store/);
    expect((await rest('guest', 'GET', '/api/documents')).headers.get('cache-control')).toMatch(/no-store/);
  });

  it('Authorization 15: lists are filtered inside the SQL statement (bob: published and not embargoed; carol: globex; root: all)', async () => {
    const expected: Record<Persona, string[]> = {
      bob: [QUARTERLY, LITIGATION],
      erin: ACME_TITLES,
      alice: ACME_TITLES,
      carol: GLOBEX_TITLES,
      root: [...ACME_TITLES, ...GLOBEX_TITLES],
    };
    for (const [who, titles] of Object.entries(expected) as [Persona, string[]][]) {
      const { result, statements } = await requestStatementsDuring(() => gql(who, LIST));
      expect(titlesOf(result), who).toEqual([...titles].sort());
      expect(restTitlesOf(await rest(who, 'GET', '/api/documents')), who).toEqual([...titles].sort());
      const listing = statements.filter((s) => /from "documents"/i.test(s));
      expect(listing, who).toHaveLength(1);
      expect(listing[0]).toMatch(/limit/i);
      if (who === 'bob') expect(listing[0]).toMatch(/'PUBLISHED'/);
    }
    // Paging walks the filtered set: bob's first page of one has exactly one more after it.
    const first = await gql('bob', LIST, { first: 1 });
    expect(first.json.data.documents.pageInfo.hasNextPage).toBe(true);
    const second = await gql('bob', LIST, { first: 1, after: first.json.data.documents.pageInfo.endCursor });
    expect(second.json.data.documents.pageInfo.hasNextPage).toBe(false);
    expect([...titlesOf(first), ...titlesOf(second)].sort()).toEqual([LITIGATION, QUARTERLY].sort());
  });
});
