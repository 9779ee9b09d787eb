import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectGraphQLRefusal, expectRestRefusal, expectSameRefusal } from './support/authorization-refusals.js';
import {
  DELETE,
  HOLD,
  ROLE,
  QUARTERLY,
  ROADMAP,
  LITIGATION,
  LAUNCH,
  PRICING,
  HANDBOOK,
  MERGER,
  demo,
  idOf,
  gql,
  rest,
  rowOf,
  roleOf,
  useAuthorizationService,
} from './support/authorization-suite.js';
import { COST_REPORTED } from './support/cost.js';

/**
 * Spec Authorization 1, 6, 7 and 8 for deleteDocument, setLegalHold and changeMemberRole, called by every kind of caller on both surfaces.
 * Shared setup, operations and refusal checks: support/authorization-suite.ts, support/authorization-refusals.ts.
 */

useAuthorizationService();

describe('every mutation by guest, VIEWER, EDITOR, ADMIN/OWNER and super-admin (spec Authorization 1, 2, 4, 6, 7)', () => {
  it('Authorization 1, 6, 8: deleteDocument — VIEWER 403, EDITOR only own, ADMIN/OWNER any, another tenant 404 like a missing id', async () => {
    const quarterly = idOf(QUARTERLY);
    expectSameRefusal(
      await gql('bob', DELETE, { id: quarterly }),
      'deleteDocument',
      await rest('bob', 'DELETE', `/api/documents/${quarterly}`),
      'FORBIDDEN',
    );
    // erin is an EDITOR: not alice's document ...
    expectSameRefusal(
      await gql('erin', DELETE, { id: quarterly }),
      'deleteDocument',
      await rest('erin', 'DELETE', `/api/documents/${quarterly}`),
      'FORBIDDEN',
    );
    // carol on acme: NOT_FOUND, byte for byte like a random id.
    const foreign = await gql('carol', DELETE, { id: quarterly });
    expectGraphQLRefusal(foreign, 'deleteDocument', 'NOT_FOUND');
    expect(foreign.json).toEqual((await gql('carol', DELETE, { id: randomUUID() })).json);
    const foreignRest = await rest('carol', 'DELETE', `/api/documents/${quarterly}`);
    expectRestRefusal(foreignRest, 'NOT_FOUND');
    expect(foreignRest.json).toEqual((await rest('carol', 'DELETE', `/api/documents/${randomUUID()}`)).json);
    expect(await rowOf(QUARTERLY)).toBeDefined();

    // ... but her own; the OWNER any; the super-admin anywhere.
    const cases = [
      ['erin', ROADMAP, PRICING],
      ['alice', QUARTERLY, LAUNCH],
      ['root', HANDBOOK, MERGER],
    ] as const;
    for (const [who, viaGraphQL, viaRest] of cases) {
      expect((await gql(who, DELETE, { id: idOf(viaGraphQL) })).json, who).toEqual({
        data: { deleteDocument: { deletedDocumentId: idOf(viaGraphQL), userErrors: [] } },
        extensions: COST_REPORTED,
      });
      const res = await rest(who, 'DELETE', `/api/documents/${idOf(viaRest)}`);
      expect(res.status, res.text).toBe(204);
      expect(res.text).toBe('');
      expect(await rowOf(viaGraphQL)).toBeUndefined();
      expect(await rowOf(viaRest)).toBeUndefined();
    }
    // Deleted is missing: the next attempt is 404 on both surfaces.
    expectSameRefusal(
      await gql('alice', DELETE, { id: idOf(QUARTERLY) }),
      'deleteDocument',
      await rest('alice', 'DELETE', `/api/documents/${idOf(QUARTERLY)}`),
      'NOT_FOUND',
    );
  });

  it('Authorization 7, 8: setLegalHold — VIEWER and EDITOR 403 (route needs ADMIN), another tenant 404, OWNER and super-admin allowed; lifting the hold makes the memo deletable', async () => {
    const litigation = idOf(LITIGATION);
    for (const who of ['bob', 'erin'] as const) {
      const res = await gql(who, HOLD, { id: litigation, hold: false });
      expectGraphQLRefusal(res, 'setLegalHold', 'FORBIDDEN');
      // before the resolver: the same answer for a random id
      expect(res.json).toEqual((await gql(who, HOLD, { id: randomUUID(), hold: false })).json);
    }
    const foreign = await gql('carol', HOLD, { id: litigation, hold: false });
    expectGraphQLRefusal(foreign, 'setLegalHold', 'NOT_FOUND');
    expect(foreign.json).toEqual((await gql('carol', HOLD, { id: randomUUID(), hold: false })).json);
    expect((await rowOf(LITIGATION))!.legalHold).toBe(true);

    expect((await gql('carol', HOLD, { id: idOf(HANDBOOK), hold: true })).json).toEqual({
      data: { setLegalHold: { document: { id: idOf(HANDBOOK), legalHold: true }, userErrors: [] } },
      extensions: COST_REPORTED,
    });
    expect((await gql('root', HOLD, { id: idOf(QUARTERLY), hold: true })).json).toEqual({
      data: { setLegalHold: { document: { id: idOf(QUARTERLY), legalHold: true }, userErrors: [] } },
      extensions: COST_REPORTED,
    });
    // The hold, not the role, is what stops alice deleting the memo.
    expectGraphQLRefusal(await gql('alice', DELETE, { id: litigation }), 'deleteDocument', 'FORBIDDEN');
    expect((await gql('alice', HOLD, { id: litigation, hold: false })).json).toEqual({
      data: { setLegalHold: { document: { id: litigation, legalHold: false }, userErrors: [] } },
      extensions: COST_REPORTED,
    });
    expect((await gql('alice', DELETE, { id: litigation })).json).toEqual({
      data: { deleteDocument: { deletedDocumentId: litigation, userErrors: [] } },
      extensions: COST_REPORTED,
    });
  });

  it("Authorization 7: changeMemberRole — VIEWER/EDITOR 403, another tenant 404, never to or from a role above one's own, the last OWNER stays", async () => {
    const acme = (await rowOf(QUARTERLY))!.organizationId;
    const input = (userId: string, role: string, organization = 'acme') => ({ input: { organization, userId, role } });
    for (const who of ['bob', 'erin'] as const) {
      const res = await gql(who, ROLE, input(demo.userId[who], 'OWNER'));
      expectGraphQLRefusal(res, 'changeMemberRole', 'FORBIDDEN');
    }
    // carol (ADMIN of globex) on acme: exactly like an organization that does not exist.
    const foreign = await gql('carol', ROLE, input(demo.userId.bob, 'ADMIN'));
    expectGraphQLRefusal(foreign, 'changeMemberRole', 'NOT_FOUND');
    expect(foreign.json).toEqual((await gql('carol', ROLE, input(demo.userId.bob, 'ADMIN', 'no-such-org'))).json);
    // ... and someone who is not a member of her own organization: NOT_FOUND too.
    expectGraphQLRefusal(await gql('carol', ROLE, input(demo.userId.alice, 'VIEWER', 'globex')), 'changeMemberRole', 'NOT_FOUND');
    expect(await roleOf('bob', acme)).toBe('VIEWER');

    // alice (OWNER) makes bob an ADMIN; bob's existing token now carries the new role (read at decision time).
    expect((await gql('alice', ROLE, input(demo.userId.bob, 'ADMIN'))).json).toEqual({
      data: {
        changeMemberRole: { membership: { role: 'ADMIN', user: { id: demo.userId.bob }, organization: { slug: 'acme' } }, userErrors: [] },
      },
      extensions: COST_REPORTED,
    });
    // An ADMIN may not make anyone an OWNER, nor touch an OWNER.
    expectGraphQLRefusal(await gql('bob', ROLE, input(demo.userId.erin, 'OWNER')), 'changeMemberRole', 'FORBIDDEN');
    expectGraphQLRefusal(await gql('bob', ROLE, input(demo.userId.alice, 'VIEWER')), 'changeMemberRole', 'FORBIDDEN');
    expectGraphQLRefusal(await gql('bob', ROLE, input(demo.userId.bob, 'OWNER')), 'changeMemberRole', 'FORBIDDEN');
    expect(await roleOf('erin', acme)).toBe('EDITOR');
    expect(await roleOf('alice', acme)).toBe('OWNER');
    expect(await roleOf('bob', acme)).toBe('ADMIN');
    // ... but may move roles up to his own.
    expect((await gql('bob', ROLE, input(demo.userId.erin, 'ADMIN'))).json.data.changeMemberRole).toMatchObject({
      membership: { role: 'ADMIN' },
      userErrors: [],
    });
    expect(await roleOf('erin', acme)).toBe('ADMIN');

    // Demoting the last OWNER is a business failure, reported as data.
    for (const who of ['alice', 'root'] as const) {
      const res = await gql(who, ROLE, input(demo.userId.alice, 'ADMIN'));
      expect(res.json).toEqual({
        data: {
          changeMemberRole: {
            membership: null,
            userErrors: [{ field: ['input', 'role'], message: 'The organization must keep at least one OWNER.', code: 'LAST_OWNER' }],
          },
        },
        extensions: COST_REPORTED,
      });
    }
    expect(await roleOf('alice', acme)).toBe('OWNER');
    // The super-admin passes the before hook.
    expect((await gql('root', ROLE, input(demo.userId.bob, 'OWNER'))).json.data.changeMemberRole).toMatchObject({
      membership: { role: 'OWNER' },
      userErrors: [],
    });
  });
});
