import { memberships, passkeys } from '@latchkey/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { COST_REPORTED } from './support/cost.js';
import { STEPPED_UP, type Persona } from './support/demo.js';
import { challengeOf, postGraphQL } from './support/service.js';
import { overWebSocket, wsClient } from './support/subscriptions.js';
import {
  GQL,
  JSON_TYPE,
  PHR,
  TWO_FACTOR,
  ONE_FACTOR,
  HOLD,
  ROLE,
  REMOVE_PASSKEY,
  VIEWER_CAN,
  CHALLENGE_PHR,
  CHALLENGE_FRESH,
  CHALLENGE_OWNER,
  service,
  demo,
  now,
  ottToken,
  idOf,
  gql,
  locationOf,
  legalHoldOf,
  roleOf,
  useStepUpService,
} from './support/step-up-suite.js';

// spec Multi-factor rules 6 / RFC 9470. Step-up over GraphQL: setLegalHold (a phishing-resistant sign-in), changeMemberRole to OWNER (two factors within
// 15 minutes) and removePasskey (a sign-in within 5 minutes).

useStepUpService();

/** setLegalHold refused for want of a phishing-resistant sign-in: null at its path, the RFC 9470 fields. */
const HOLD_REFUSED = {
  data: { setLegalHold: null },
  errors: [
    {
      message: 'A different authentication level is required.',
      locations: [locationOf(HOLD, 'setLegalHold')],
      path: ['setLegalHold'],
      extensions: { code: 'INSUFFICIENT_USER_AUTHENTICATION', acr_values: PHR },
    },
  ],
  extensions: COST_REPORTED,
};

describe('spec Multi-factor rules 6 / RFC 9470: setLegalHold asks for a phishing-resistant sign-in', () => {
  it('a token from a one-time-token sign-in: 401 + WWW-Authenticate under graphql-response+json, 200 under application/json; nothing written', async () => {
    const token = await ottToken('alice');
    const variables = { id: idOf('Quarterly plan'), hold: true };
    const expected = HOLD_REFUSED;
    const strict = await gql(token, HOLD, variables, GQL);
    expect(strict.status, strict.text).toBe(401);
    expect(strict.headers.get('www-authenticate')).toBe(challengeOf(service, CHALLENGE_PHR));
    expect(strict.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    expect(strict.json).toEqual(expected);

    const legacy = await gql(token, HOLD, variables, JSON_TYPE);
    expect(legacy.status, legacy.text).toBe(200);
    expect(legacy.headers.get('www-authenticate')).toBe(challengeOf(service, CHALLENGE_PHR));
    expect(legacy.json).toEqual(expected);
    expect(await legalHoldOf('Quarterly plan')).toBe(false);
  });

  it('over WebSocket the same refusal carries its code and acr_values only (nothing of the HTTP status or headers); nothing written', async () => {
    const client = wsClient(service.graphqlUrl, await ottToken('alice'));
    const received = overWebSocket(client, { query: HOLD, variables: { id: idOf('Quarterly plan'), hold: true } });
    await received.ended();
    expect(received.results).toEqual([HOLD_REFUSED]);
    await client.dispose();
    expect(await legalHoldOf('Quarterly plan')).toBe(false);
  });

  it('in a batch each entry answers for itself: 200, the step-up error in its entry', async () => {
    const token = await ottToken('alice');
    const res = await postGraphQL(
      service.graphqlUrl,
      [{ query: HOLD, variables: { id: idOf('Quarterly plan'), hold: true } }, { query: '{ viewer { acr } }' }],
      { token },
    );
    expect(res.status).toBe(200);
    expect(res.json[0].errors[0].extensions).toEqual({ code: 'INSUFFICIENT_USER_AUTHENTICATION', acr_values: PHR });
    expect(res.json[1]).toEqual({ data: { viewer: { acr: ONE_FACTOR } }, extensions: COST_REPORTED });
  });

  it('two factors are not enough, nor a token without acr or with a level the API does not know', async () => {
    for (const claims of [{ acr: TWO_FACTOR, amr: ['otp', 'mfa'] }, { amr: ['otp'] }, { acr: 'urn:latchkey:acr:passkey', amr: ['swk'] }]) {
      const res = await gql(await demo.token('alice', claims), HOLD, { id: idOf('Quarterly plan'), hold: true });
      expect(res.status, JSON.stringify(claims)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(challengeOf(service, CHALLENGE_PHR));
      expect(res.json.errors[0].extensions).toEqual({ code: 'INSUFFICIENT_USER_AUTHENTICATION', acr_values: PHR });
    }
    expect(await legalHoldOf('Quarterly plan')).toBe(false);
  });

  it('a phishing-resistant sign-in (passkey) succeeds, however long ago (no max_age on this mark)', async () => {
    const fresh = await gql(await demo.token('alice', STEPPED_UP), HOLD, { id: idOf('Quarterly plan'), hold: true });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('www-authenticate')).toBeNull();
    expect(fresh.json).toEqual({
      data: { setLegalHold: { document: { id: idOf('Quarterly plan'), legalHold: true }, userErrors: [] } },
      extensions: COST_REPORTED,
    });
    const old = await gql(await demo.token('alice', { ...STEPPED_UP, authTime: now() - 86_400 }), HOLD, {
      id: idOf('Quarterly plan'),
      hold: false,
    });
    expect(old.json.data.setLegalHold.document.legalHold).toBe(false);
  });

  it('a guest is still UNAUTHENTICATED (401, Bearer), refused before execution', async () => {
    const res = await gql(undefined, HOLD, { id: idOf('Quarterly plan'), hold: true });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(challengeOf(service, 'Bearer'));
    expect(res.json).toEqual({
      errors: [{ message: 'Sign in to perform this operation.', extensions: { code: 'UNAUTHENTICATED' } }],
      extensions: COST_REPORTED,
    });
  });

  it('a caller who is not allowed at all gets FORBIDDEN (200), never a challenge, whatever the token', async () => {
    for (const persona of ['bob', 'erin'] as const) {
      for (const token of [await ottToken(persona), await demo.token(persona, STEPPED_UP)]) {
        const res = await gql(token, HOLD, { id: idOf('Quarterly plan'), hold: true });
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get('www-authenticate')).toBeNull();
        expect(res.json).toEqual({
          data: { setLegalHold: null },
          errors: [
            {
              message: 'You are not allowed to do this.',
              locations: [locationOf(HOLD, 'setLegalHold')],
              path: ['setLegalHold'],
              extensions: { code: 'FORBIDDEN' },
            },
          ],
          extensions: COST_REPORTED,
        });
      }
    }
  });

  it('viewerCan keeps answering the ability alone: the same for a weak token as for a stepped-up one', async () => {
    for (const persona of ['alice', 'bob', 'erin', 'carol', 'root'] as const) {
      for (const title of ['Quarterly plan', 'Litigation memo', 'Draft roadmap']) {
        const weak = await gql(await ottToken(persona), VIEWER_CAN, { id: idOf(title) });
        const strong = await gql(await demo.token(persona, STEPPED_UP), VIEWER_CAN, { id: idOf(title) });
        expect(weak.status).toBe(strong.status);
        expect(weak.json, `${persona} ${title}`).toEqual(strong.json);
      }
    }
    const alice = await gql(await ottToken('alice'), VIEWER_CAN, { id: idOf('Quarterly plan') });
    expect(alice.json.data.document.viewerCan.setLegalHold).toBe(true);
  });

  it('the challenge comes with the route-level marks, before the record-level rules: another tenant steps up, then gets NOT_FOUND', async () => {
    const weak = await gql(await ottToken('carol'), HOLD, { id: idOf('Quarterly plan'), hold: true });
    expect(weak.status).toBe(401);
    expect(weak.json.errors[0].extensions.code).toBe('INSUFFICIENT_USER_AUTHENTICATION');
    const strong = await gql(await demo.token('carol', STEPPED_UP), HOLD, { id: idOf('Quarterly plan'), hold: true });
    expect(strong.status).toBe(200);
    expect(strong.json.errors[0].extensions).toEqual({ code: 'NOT_FOUND' });
  });
});

describe('spec Multi-factor rules 6 / RFC 9470: changeMemberRole to OWNER asks for two factors within 15 minutes', () => {
  const input = (persona: Persona, role: string, organization = 'acme') => ({
    input: { organization, userId: demo.userId[persona], role },
  });

  it('to EDITOR with a one-factor token: done, no challenge', async () => {
    const res = await gql(await ottToken('alice'), ROLE, input('bob', 'EDITOR'));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ data: { changeMemberRole: { membership: { role: 'EDITOR' }, userErrors: [] } }, extensions: COST_REPORTED });
  });

  it('to OWNER with a one-factor token: 401 + challenge (acr_values and max_age), nothing written', async () => {
    for (const accept of [GQL, JSON_TYPE]) {
      const res = await gql(await ottToken('alice'), ROLE, input('bob', 'OWNER'), accept);
      expect(res.status, res.text).toBe(accept === GQL ? 401 : 200);
      expect(res.headers.get('www-authenticate')).toBe(challengeOf(service, CHALLENGE_OWNER));
      expect(res.json).toEqual({
        data: { changeMemberRole: null },
        errors: [
          {
            message: 'A different authentication level is required.',
            locations: [locationOf(ROLE, 'changeMemberRole')],
            path: ['changeMemberRole'],
            extensions: { code: 'INSUFFICIENT_USER_AUTHENTICATION', acr_values: TWO_FACTOR, max_age: 900 },
          },
        ],
        extensions: COST_REPORTED,
      });
    }
    expect(await roleOf('bob')).toBe('VIEWER');
  });

  it('to OWNER with a two-factor sign-in of 20 minutes ago: challenged; of just now: done', async () => {
    const old = await gql(
      await demo.token('alice', { acr: TWO_FACTOR, amr: ['otp', 'mfa'], authTime: now() - 1200 }),
      ROLE,
      input('bob', 'OWNER'),
    );
    expect(old.status).toBe(401);
    expect(old.headers.get('www-authenticate')).toBe(challengeOf(service, CHALLENGE_OWNER));
    expect(await roleOf('bob')).toBe('VIEWER');
    const fresh = await gql(await demo.token('alice', { acr: TWO_FACTOR, amr: ['otp', 'mfa'] }), ROLE, input('bob', 'OWNER'));
    expect(fresh.status).toBe(200);
    expect(fresh.json).toEqual({
      data: { changeMemberRole: { membership: { role: 'OWNER' }, userErrors: [] } },
      extensions: COST_REPORTED,
    });
    expect(await roleOf('bob')).toBe('OWNER');
  });

  it('a caller not allowed to make anyone OWNER gets FORBIDDEN, another tenant NOT_FOUND: never a challenge', async () => {
    const viewer = await gql(await ottToken('bob'), ROLE, input('erin', 'OWNER'));
    expect(viewer.status).toBe(200);
    expect(viewer.json.errors[0].extensions).toEqual({ code: 'FORBIDDEN' });
    // an ADMIN may not grant a role above their own
    await service.database.db.update(memberships).set({ role: 'ADMIN' }).where(eq(memberships.userId, demo.userId.bob));
    const admin = await gql(await ottToken('bob'), ROLE, input('erin', 'OWNER'));
    expect(admin.json.errors[0].extensions).toEqual({ code: 'FORBIDDEN' });
    const foreign = await gql(await ottToken('carol'), ROLE, input('bob', 'OWNER'));
    expect(foreign.status).toBe(200);
    expect(foreign.json.errors[0].extensions).toEqual({ code: 'NOT_FOUND' });
    expect(await roleOf('erin')).toBe('EDITOR');
  });
});

describe('spec Multi-factor rules 6 / RFC 9470: removing a passkey (a credential change) asks for a sign-in within 5 minutes', () => {
  const addPasskey = () =>
    service.database.db.insert(passkeys).values({
      id: 'alice-key-1',
      userId: demo.userId.alice,
      label: 'Laptop',
      userHandle: `handle-${demo.userId.alice}`,
      publicKey: new Uint8Array([1, 2, 3]),
      counter: 1,
      transports: ['internal'],
      deviceType: 'singleDevice',
      backedUp: false,
      aaguid: '00000000-0000-0000-0000-000000000000',
      rpId: 'localhost',
    });

  it('a sign-in of 10 minutes ago, even a passkey one: 401 + max_age challenge; the passkey stays', async () => {
    await addPasskey();
    const token = await demo.token('alice', { ...STEPPED_UP, authTime: now() - 600 });
    const res = await gql(token, REMOVE_PASSKEY, { id: 'alice-key-1' });
    expect(res.status, res.text).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(challengeOf(service, CHALLENGE_FRESH));
    expect(res.json).toEqual({
      data: { removePasskey: null },
      errors: [
        {
          message: 'More recent authentication is required.',
          locations: [locationOf(REMOVE_PASSKEY, 'removePasskey')],
          path: ['removePasskey'],
          extensions: { code: 'INSUFFICIENT_USER_AUTHENTICATION', max_age: 300 },
        },
      ],
      extensions: COST_REPORTED,
    });
    expect(await service.database.db.select({ id: passkeys.id }).from(passkeys)).toEqual([{ id: 'alice-key-1' }]);
  });

  it('a one-factor sign-in of just now: removed', async () => {
    await addPasskey();
    const res = await gql(await ottToken('alice'), REMOVE_PASSKEY, { id: 'alice-key-1' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ data: { removePasskey: { removedPasskeyId: 'alice-key-1' } }, extensions: COST_REPORTED });
  });

  it('renaming is not a credential change: no step-up', async () => {
    await addPasskey();
    const rename = 'mutation { renamePasskey(id: "alice-key-1", label: "Old laptop") { passkey { label } } }';
    const res = await postGraphQL(
      service.graphqlUrl,
      { query: rename },
      { token: await demo.token('alice', { authTime: now() - 86_400 }) },
    );
    expect(res.json).toEqual({ data: { renamePasskey: { passkey: { label: 'Old laptop' } } }, extensions: COST_REPORTED });
  });
});
