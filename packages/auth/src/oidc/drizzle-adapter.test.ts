import { describe, expect, it } from 'vitest';
import { createDrizzleAdapter, purgeExpiredOidcModels, type OidcPayload } from '../index.js';
import { adapterFor, database, storedRows, useOidcDatabase } from '../test-support/oidc-database.js';

// The adapter's storage contract on the real database; the provider running on it is drizzle-adapter-provider.test.ts.

useOidcDatabase();

const epochSeconds = () => Math.floor(Date.now() / 1000);
/** A clock for the adapter that moves only when the test moves it: expiry is seen without waiting for it. */
function testClock() {
  let at = Date.now();
  return {
    now: () => at,
    advance(ms: number) {
      at += ms;
    },
  };
}

describe('Drizzle adapter for oidc-provider', () => {
  it('upsert then find returns the payload unchanged, nested objects and arrays included', async () => {
    const session = adapterFor('Session');
    const payload: OidcPayload = {
      iat: 1_700_000_000,
      exp: 1_900_000_000,
      jti: 'sess-1',
      uid: 'uid-1',
      kind: 'Session',
      accountId: 'alice@acme.test',
      loginTs: 1_700_000_000,
      amr: ['pwd', 'otp'],
      authorizations: { 'client-a': { sid: 's1', grantId: 'g1', persistsLogout: false } },
      nested: { deep: { list: [1, 'two', { three: null }], flag: true, empty: {}, none: [] } },
      unicode: 'Zoë — 東京',
    };
    await session.upsert('sess-1', payload, 3600);
    expect(await session.find('sess-1')).toEqual(payload);
    expect(await session.find('missing')).toBeUndefined();
    // Stored as a jsonb object, not as a JSON string inside jsonb (the classic double-encoding mistake).
    expect(await storedRows()).toEqual([{ model: 'Session', id: 'sess-1', grantId: null, type: 'object' }]);
  });

  it('upsert on an existing id replaces the payload, expiry and lookup keys', async () => {
    const clock = testClock();
    const session = adapterFor('Session', clock.now);
    await session.upsert('sess-2', { jti: 'sess-2', uid: 'old-uid', accountId: 'a' }, 1);
    await session.upsert('sess-2', { jti: 'sess-2', uid: 'new-uid', accountId: 'b', amr: ['pwd'] }, 3600);
    expect(await session.find('sess-2')).toEqual({ jti: 'sess-2', uid: 'new-uid', accountId: 'b', amr: ['pwd'] });
    expect(await session.findByUid('old-uid')).toBeUndefined();
    expect(await session.findByUid('new-uid')).toMatchObject({ accountId: 'b' });
    expect(await storedRows()).toHaveLength(1);
    clock.advance(1200);
    // The first save's 1-second expiry was replaced by the second's hour.
    expect(await session.find('sess-2')).toMatchObject({ accountId: 'b' });
  });

  it('find returns undefined once expiresIn has passed; no expiresIn never expires', async () => {
    const clock = testClock();
    const codes = adapterFor('AuthorizationCode', clock.now);
    await codes.upsert('short', { jti: 'short', grantId: 'g' }, 2);
    expect(await codes.find('short')).toMatchObject({ jti: 'short' });
    await codes.upsert('past', { jti: 'past', grantId: 'g' }, -5);
    await adapterFor('Client', clock.now).upsert('dyn-client', { client_id: 'dyn-client', redirect_uris: ['https://rp.test/cb'] });
    expect(await codes.find('past')).toBeUndefined();
    // Found until the instant it expires, 2 s after it was saved; not after.
    clock.advance(1999);
    expect(await codes.find('short')).toMatchObject({ jti: 'short' });
    clock.advance(1);
    expect(await codes.find('short')).toBeUndefined();
    clock.advance(10 * 365 * 86_400_000);
    expect(await adapterFor('Client', clock.now).find('dyn-client')).toEqual({
      client_id: 'dyn-client',
      redirect_uris: ['https://rp.test/cb'],
    });
  });

  it('consume sets `consumed` (epoch seconds) and find shows it; the payload is otherwise untouched', async () => {
    const codes = adapterFor('AuthorizationCode');
    await codes.upsert('code-1', { jti: 'code-1', grantId: 'g1', scope: 'openid' }, 60);
    expect(await codes.find('code-1')).not.toHaveProperty('consumed');
    const before = epochSeconds();
    await codes.consume('code-1');
    const after = epochSeconds();
    const found = await codes.find('code-1');
    expect(found).toMatchObject({ jti: 'code-1', grantId: 'g1', scope: 'openid' });
    expect(typeof found?.['consumed']).toBe('number');
    expect(Number.isInteger(found?.['consumed'])).toBe(true);
    expect(found?.['consumed']).toBeGreaterThanOrEqual(before - 1);
    expect(found?.['consumed']).toBeLessThanOrEqual(after + 1);
    // A model that saves itself again after being consumed keeps the mark only through its payload.
    await codes.upsert('code-1', { jti: 'code-1', consumed: 1_800_000_000 }, 60);
    expect(await codes.find('code-1')).toEqual({ jti: 'code-1', consumed: 1_800_000_000 });
    await codes.upsert('code-1', { jti: 'code-1' }, 60);
    expect(await codes.find('code-1')).toEqual({ jti: 'code-1' });
    // Consuming something unknown is a no-op, not an error.
    await expect(codes.consume('nope')).resolves.toBeUndefined();
  });

  it('destroy removes only that row', async () => {
    const tokens = adapterFor('AccessToken');
    await tokens.upsert('at-1', { jti: 'at-1' }, 60);
    await tokens.upsert('at-2', { jti: 'at-2' }, 60);
    await tokens.destroy('at-1');
    await tokens.destroy('never-existed');
    expect(await tokens.find('at-1')).toBeUndefined();
    expect(await tokens.find('at-2')).toEqual({ jti: 'at-2' });
  });

  it("findByUid and findByUserCode look up within the adapter's model and skip expired rows (a device code's after a grace period)", async () => {
    const sessions = adapterFor('Session');
    const deviceCodes = adapterFor('DeviceCode');
    await sessions.upsert('sess-a', { jti: 'sess-a', uid: 'uid-a', accountId: 'alice' }, 60);
    await sessions.upsert('sess-old', { jti: 'sess-old', uid: 'uid-old' }, -1);
    await deviceCodes.upsert('dc-1', { jti: 'dc-1', userCode: 'WDJB-MJHT', grantId: 'g-dc', uid: 'uid-a' }, 600);
    // A device code's row outlives its expiry by 10 minutes (the provider then answers expired_token), no longer.
    await deviceCodes.upsert('dc-old', { jti: 'dc-old', userCode: 'OLD-CODE' }, -601);
    await deviceCodes.upsert('dc-just-expired', { jti: 'dc-just-expired', userCode: 'JUST-EXPIRED' }, -1);

    expect(await sessions.findByUid('uid-a')).toEqual({ jti: 'sess-a', uid: 'uid-a', accountId: 'alice' });
    expect(await sessions.findByUid('uid-old')).toBeUndefined();
    expect(await sessions.findByUid('unknown')).toBeUndefined();
    expect(await deviceCodes.findByUserCode('WDJB-MJHT')).toEqual({ jti: 'dc-1', userCode: 'WDJB-MJHT', grantId: 'g-dc', uid: 'uid-a' });
    expect(await deviceCodes.findByUserCode('OLD-CODE')).toBeUndefined();
    expect(await deviceCodes.findByUserCode('JUST-EXPIRED')).toEqual({ jti: 'dc-just-expired', userCode: 'JUST-EXPIRED' });
    expect(await deviceCodes.findByUserCode('wdjb-mjht')).toBeUndefined();
    // Another model's rows never answer.
    expect(await sessions.findByUserCode('WDJB-MJHT')).toBeUndefined();
    expect(await adapterFor('Interaction').findByUid('uid-a')).toBeUndefined();
    // consume is visible through the secondary lookups too.
    await deviceCodes.consume('dc-1');
    expect(await deviceCodes.findByUserCode('WDJB-MJHT')).toHaveProperty('consumed');
  });

  it('revokeByGrantId removes every token of that grant, whatever the calling model, and nothing else', async () => {
    const accessTokens = adapterFor('AccessToken');
    const refreshTokens = adapterFor('RefreshToken');
    const codes = adapterFor('AuthorizationCode');
    const grants = adapterFor('Grant');
    const interactions = adapterFor('Interaction');
    for (const grantId of ['g-revoked', 'g-kept']) {
      await accessTokens.upsert(`at-${grantId}`, { jti: `at-${grantId}`, grantId }, 60);
      await refreshTokens.upsert(`rt-${grantId}`, { jti: `rt-${grantId}`, grantId }, 60);
      await codes.upsert(`ac-${grantId}`, { jti: `ac-${grantId}`, grantId }, 60);
      await grants.upsert(grantId, { jti: grantId, accountId: 'alice', clientId: 'c' }, 60);
    }
    // An Interaction carries the grantId of the grant it extends; like the memory adapter, revocation leaves it.
    await interactions.upsert('int-1', { jti: 'int-1', grantId: 'g-revoked' }, 60);

    await accessTokens.revokeByGrantId('g-revoked');

    expect(await accessTokens.find('at-g-revoked')).toBeUndefined();
    expect(await refreshTokens.find('rt-g-revoked')).toBeUndefined();
    expect(await codes.find('ac-g-revoked')).toBeUndefined();
    expect(await accessTokens.find('at-g-kept')).toMatchObject({ grantId: 'g-kept' });
    expect(await refreshTokens.find('rt-g-kept')).toMatchObject({ grantId: 'g-kept' });
    expect(await codes.find('ac-g-kept')).toMatchObject({ grantId: 'g-kept' });
    // The Grant itself is the provider's to destroy (revokeGrantPolicy), by id.
    expect(await grants.find('g-revoked')).toMatchObject({ jti: 'g-revoked' });
    expect(await interactions.find('int-1')).toMatchObject({ grantId: 'g-revoked' });
  });

  it('models are isolated: the same id in two models is two rows', async () => {
    const accessTokens = adapterFor('AccessToken');
    const refreshTokens = adapterFor('RefreshToken');
    await accessTokens.upsert('same-id', { jti: 'same-id', kind: 'AccessToken' }, 60);
    await refreshTokens.upsert('same-id', { jti: 'same-id', kind: 'RefreshToken' }, 60);
    expect(await accessTokens.find('same-id')).toEqual({ jti: 'same-id', kind: 'AccessToken' });
    expect(await refreshTokens.find('same-id')).toEqual({ jti: 'same-id', kind: 'RefreshToken' });
    await refreshTokens.consume('same-id');
    expect(await accessTokens.find('same-id')).not.toHaveProperty('consumed');
    await accessTokens.destroy('same-id');
    expect(await accessTokens.find('same-id')).toBeUndefined();
    expect(await refreshTokens.find('same-id')).toMatchObject({ kind: 'RefreshToken' });
  });

  it('purgeExpiredOidcModels deletes expired rows only and reports how many', async () => {
    const tokens = adapterFor('AccessToken');
    await tokens.upsert('expired-1', { jti: 'expired-1' }, -10);
    await tokens.upsert('expired-2', { jti: 'expired-2' }, -1);
    await tokens.upsert('live', { jti: 'live' }, 600);
    await adapterFor('Client').upsert('forever', { client_id: 'forever' });
    expect(await purgeExpiredOidcModels(database.db)).toBe(2);
    expect((await storedRows()).map((row) => `${row.model}:${row.id}`)).toEqual(['AccessToken:live', 'Client:forever']);
    expect(await purgeExpiredOidcModels(database.db)).toBe(0);
    // With a later `now`, the 10-minute token goes too; the client without expiry never does.
    expect(await purgeExpiredOidcModels(database.db, new Date(Date.now() + 3_600_000))).toBe(1);
    expect((await storedRows()).map((row) => `${row.model}:${row.id}`)).toEqual(['Client:forever']);
  });
});

describe('Drizzle adapter: what jsonb cannot store', () => {
  it('a payload with a NUL character is refused as invalid_request (400), and nothing is written', async () => {
    const Adapter = createDrizzleAdapter(database.db);
    const interactions = new Adapter('Interaction');
    await expect(interactions.upsert('nul-1', { params: { state: 'a\u0000b' } }, 60)).rejects.toMatchObject({
      message: 'invalid_request',
      statusCode: 400,
      expose: true,
    });
    expect(await interactions.find('nul-1')).toBeUndefined();
  });
});
