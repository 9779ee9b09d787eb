import { onDenied, type DenialEvent } from '@latchkey/policy';
import { describe, expect, it } from 'vitest';
import { POLICY_NAMES } from './support/authorization-refusals.js';
import {
  DOCUMENT,
  DOCUMENT_CAN,
  UPDATE,
  PUBLISH,
  DELETE,
  QUARTERLY,
  ROADMAP,
  LITIGATION,
  MERGER,
  demo,
  idOf,
  gql,
  rest,
  denialsDuring,
  useAuthorizationService,
} from './support/authorization-suite.js';
import { COST_REPORTED } from './support/cost.js';

/**
 * Spec Events 2 and 3: denials are published with exactly their fields, a mere `false` publishes nothing, and responses never name a policy or an ability.
 * Shared setup, operations and refusal checks: support/authorization-suite.ts, support/authorization-refusals.ts.
 */

useAuthorizationService();

describe('denial events (spec Events 2, 3)', () => {
  it('Events 2: a denial is published on the diagnostics channel and the observable stream with exactly type, policy, ability, reason, user, args, handler', async () => {
    const quarterly = idOf(QUARTERLY);
    const streamed: DenialEvent[] = [];
    const stop = onDenied((event) => streamed.push(event));
    let events: DenialEvent[];
    try {
      ({ events } = await denialsDuring(async () => {
        await gql('erin', DELETE, { id: quarterly });
        await rest('erin', 'DELETE', `/api/documents/${quarterly}`);
      }));
    } finally {
      stop();
    }
    expect(events).toHaveLength(2);
    expect(streamed).toEqual(events);
    for (const [event, handler] of [
      [events[0]!, 'Mutation.deleteDocument'],
      [events[1]!, 'DELETE /api/documents/:id'],
    ] as const) {
      expect(Object.keys(event).sort()).toEqual(['ability', 'args', 'handler', 'policy', 'reason', 'type', 'user']);
      expect(event).toMatchObject({ type: 'denied', policy: 'DocumentPolicy', ability: 'delete', reason: 'forbidden', handler });
      expect(event.user).toMatchObject({ id: demo.userId.erin, superAdmin: false, suspended: false, emailVerified: false });
      expect(Array.isArray(event.args)).toBe(true);
      expect(event.args).toHaveLength(1);
      expect(event.args[0]).toMatchObject({
        id: quarterly,
        title: QUARTERLY,
        ownerId: demo.userId.alice,
        legalHold: false,
        status: 'PUBLISHED',
      });
    }
  });

  it('Events 2: a check that merely answers false (viewerCan) publishes nothing', async () => {
    const { result, events } = await denialsDuring(async () => ({
      graphql: await gql('bob', DOCUMENT_CAN, { id: idOf(QUARTERLY) }),
      rest: await rest('bob', 'GET', `/api/documents/${idOf(QUARTERLY)}`),
    }));
    const none = { update: false, publish: false, archive: false, delete: false, setLegalHold: false };
    expect(result.graphql.json).toEqual({
      data: { document: { id: idOf(QUARTERLY), title: QUARTERLY, viewerCan: none } },
      extensions: COST_REPORTED,
    });
    expect(result.rest.json.viewerCan).toEqual(none);
    expect(events).toEqual([]);
  });

  it('Events 3: responses never name the policy or the ability (GraphQL errors carry only a code; REST bodies only statusCode, message, error)', async () => {
    const litigation = idOf(LITIGATION);
    const { result, events } = await denialsDuring(async () => [
      await gql('root', DELETE, { id: litigation }),
      await gql('bob', UPDATE, { input: { id: litigation, title: 'x' } }),
      await gql('erin', PUBLISH, { id: idOf(ROADMAP) }),
      await gql('carol', PUBLISH, { id: idOf(MERGER) }),
      await gql('bob', '{ documents { edges { node { internalNotes owner { email } } } } }'),
      await gql('bob', '{ me { memberships { organization { billingEmail } } } }'),
      await gql('carol', DOCUMENT, { id: litigation }),
      await rest('root', 'DELETE', `/api/documents/${litigation}`),
      await rest('erin', 'POST', `/api/documents/${idOf(ROADMAP)}/publish`),
      await rest('bob', 'PATCH', `/api/documents/${litigation}`, { title: 'x' }),
      await rest('carol', 'GET', `/api/documents/${litigation}`),
    ]);
    // The events name them (so the test is not vacuous) ...
    const named = new Set(events.flatMap((e) => [e.policy, e.ability]));
    for (const name of [
      'DocumentPolicy',
      'AccountPolicy',
      'OrganizationPolicy',
      'delete',
      'holdsRole',
      'publish',
      'viewInternalNotes',
      'viewEmail',
      'viewBilling',
      'view',
    ]) {
      expect(named, name).toContain(name);
    }
    // ... the responses never do.
    for (const res of result) {
      expect(res.text).not.toMatch(POLICY_NAMES);
      expect(res.text).not.toMatch(/"(policy|ability|reason)"/);
      expect(res.text).not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack trace
      if (res.headers.get('content-type')?.includes('graphql-response+json')) {
        for (const error of res.json.errors) expect(Object.keys(error.extensions)).toEqual(['code']);
      } else {
        expect(res.json).toMatchObject({ statusCode: res.status, message: expect.any(String), error: expect.any(String) });
        expect(Object.keys(res.json).filter((key) => !['statusCode', 'message', 'error', 'code'].includes(key))).toEqual([]);
      }
    }
  });
});
