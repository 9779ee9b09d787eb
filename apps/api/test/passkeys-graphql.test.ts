import { passkeys, seedDemoData } from '@latchkey/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOf, type Demo } from './support/demo.js';
import { postGraphQL, startTestService, type TestService } from './support/service.js';
import { COST_REPORTED } from './support/cost.js';

// Stored passkeys as the registration ceremony leaves them (the ceremonies themselves are proven in
// packages/auth and in the Chromium test); here the account-facing GraphQL API is under test.
let service: TestService;
let demo: Demo;

beforeAll(async () => {
  service = await startTestService();
  await seedDemoData(service.database);
  demo = await demoOf(service);
  const row = (id: string, userId: string, label: string | null) => ({
    id,
    userId,
    label,
    userHandle: `handle-${userId}`,
    publicKey: new Uint8Array([1, 2, 3]),
    counter: 1,
    transports: ['internal'],
    deviceType: 'singleDevice',
    backedUp: false,
    aaguid: '00000000-0000-0000-0000-000000000000',
    rpId: 'localhost',
  });
  await service.database.db
    .insert(passkeys)
    .values([row('alice-key-1', demo.userId.alice, 'Laptop'), row('bob-key-1', demo.userId.bob, null)]);
});
afterAll(() => service?.stop());

const ask = async (persona: 'alice' | 'bob', query: string, variables?: Record<string, unknown>) =>
  (await postGraphQL(service.graphqlUrl, { query, variables }, { token: await demo.token(persona) })).json;

describe('me.passkeys and the passkey mutations (users list, rename and remove their passkeys)', () => {
  it("the user sees their own passkeys, never a public key; a colleague's passkeys are FORBIDDEN at their path", async () => {
    expect(await ask('alice', '{ me { passkeys { id label deviceType backedUp transports lastUsedAt } } }')).toEqual({
      data: {
        me: {
          passkeys: [
            { id: 'alice-key-1', label: 'Laptop', deviceType: 'singleDevice', backedUp: false, transports: ['internal'], lastUsedAt: null },
          ],
        },
      },
      extensions: COST_REPORTED,
    });
    const colleague = await ask('bob', 'query ($id: ID!) { document(id: $id) { owner { displayName passkeys { id } } } }', {
      id: demo.documentId.get('Quarterly plan'),
    });
    expect(colleague.data.document.owner).toEqual({ displayName: 'Alice', passkeys: null });
    expect(colleague.errors).toMatchObject([{ path: ['document', 'owner', 'passkeys'], extensions: { code: 'FORBIDDEN' } }]);
  });

  it("rename: 1-64 characters; someone else's passkey is NOT_FOUND, like a missing one", async () => {
    const rename =
      'mutation ($id: ID!, $label: String!) { renamePasskey(id: $id, label: $label) { passkey { id label } userErrors { code } } }';
    expect(await ask('alice', rename, { id: 'alice-key-1', label: 'Work laptop' })).toEqual({
      data: { renamePasskey: { passkey: { id: 'alice-key-1', label: 'Work laptop' }, userErrors: [] } },
      extensions: COST_REPORTED,
    });
    for (const label of ['', 'x'.repeat(65)]) {
      expect((await ask('alice', rename, { id: 'alice-key-1', label })).errors[0].extensions.code).toBe('BAD_USER_INPUT');
    }
    const foreign = await ask('alice', rename, { id: 'bob-key-1', label: 'mine now' });
    const missing = await ask('alice', rename, { id: 'no-such-key', label: 'mine now' });
    expect(foreign).toEqual(missing);
    expect(foreign.errors[0].extensions.code).toBe('NOT_FOUND');
    expect((await ask('alice', rename, { id: 'not base64url!', label: 'x' })).errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it("remove: the passkey is gone; someone else's is NOT_FOUND and stays", async () => {
    const remove = 'mutation ($id: ID!) { removePasskey(id: $id) { removedPasskeyId } }';
    expect((await ask('bob', remove, { id: 'alice-key-1' })).errors[0].extensions.code).toBe('NOT_FOUND');
    expect(await ask('alice', remove, { id: 'alice-key-1' })).toEqual({
      data: { removePasskey: { removedPasskeyId: 'alice-key-1' } },
      extensions: COST_REPORTED,
    });
    expect(await ask('alice', '{ me { passkeys { id } } }')).toEqual({ data: { me: { passkeys: [] } }, extensions: COST_REPORTED });
    expect((await ask('alice', remove, { id: 'alice-key-1' })).errors[0].extensions.code).toBe('NOT_FOUND');
    expect((await ask('bob', '{ me { passkeys { id } } }')).data.me.passkeys).toEqual([{ id: 'bob-key-1' }]);
  });
});
