import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { and, eq, oidcModels, sql, type DatabaseHandle } from '@latchkey/db';

import Provider, { type Configuration } from 'oidc-provider';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDrizzleAdapter, purgeExpiredOidcModels, type OidcAdapter, type OidcAdapterClass, type OidcPayload } from '../index.js';
import { openOwnDatabase } from '../test-support/own-database.js';

// The real database: PostgreSQL (a database of its own) when DATABASE_URL is set, else PGlite on disk.
let database: DatabaseHandle;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ database, close: cleanup } = await openOwnDatabase('oidc'));
});
afterAll(() => cleanup?.());
beforeEach(async () => {
  await database.db.delete(oidcModels);
});

const epochSeconds = () => Math.floor(Date.now() / 1000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function adapterFor(model: string): OidcAdapter {
  const Adapter = createDrizzleAdapter(database.db);
  return new Adapter(model);
}

async function storedRows(model?: string) {
  const rows = await database.db
    .select({
      model: oidcModels.model,
      id: oidcModels.id,
      grantId: oidcModels.grantId,
      type: sql<string>`jsonb_typeof(${oidcModels.payload})`,
    })
    .from(oidcModels)
    .where(model ? eq(oidcModels.model, model) : undefined)
    .orderBy(oidcModels.model, oidcModels.id);
  return rows;
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
    const session = adapterFor('Session');
    await session.upsert('sess-2', { jti: 'sess-2', uid: 'old-uid', accountId: 'a' }, 1);
    await session.upsert('sess-2', { jti: 'sess-2', uid: 'new-uid', accountId: 'b', amr: ['pwd'] }, 3600);
    expect(await session.find('sess-2')).toEqual({ jti: 'sess-2', uid: 'new-uid', accountId: 'b', amr: ['pwd'] });
    expect(await session.findByUid('old-uid')).toBeUndefined();
    expect(await session.findByUid('new-uid')).toMatchObject({ accountId: 'b' });
    expect(await storedRows()).toHaveLength(1);
    await sleep(1200);
    // The first save's 1-second expiry was replaced by the second's hour.
    expect(await session.find('sess-2')).toMatchObject({ accountId: 'b' });
  });

  it('find returns undefined once expiresIn has passed; no expiresIn never expires', async () => {
    const codes = adapterFor('AuthorizationCode');
    await codes.upsert('short', { jti: 'short', grantId: 'g' }, 1);
    await codes.upsert('past', { jti: 'past', grantId: 'g' }, -5);
    await adapterFor('Client').upsert('dyn-client', { client_id: 'dyn-client', redirect_uris: ['https://rp.test/cb'] });
    expect(await codes.find('short')).toMatchObject({ jti: 'short' });
    expect(await codes.find('past')).toBeUndefined();
    await sleep(1200);
    expect(await codes.find('short')).toBeUndefined();
    expect(await adapterFor('Client').find('dyn-client')).toEqual({ client_id: 'dyn-client', redirect_uris: ['https://rp.test/cb'] });
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

  it("findByUid and findByUserCode look up within the adapter's model and skip expired rows", async () => {
    const sessions = adapterFor('Session');
    const deviceCodes = adapterFor('DeviceCode');
    await sessions.upsert('sess-a', { jti: 'sess-a', uid: 'uid-a', accountId: 'alice' }, 60);
    await sessions.upsert('sess-old', { jti: 'sess-old', uid: 'uid-old' }, -1);
    await deviceCodes.upsert('dc-1', { jti: 'dc-1', userCode: 'WDJB-MJHT', grantId: 'g-dc', uid: 'uid-a' }, 600);
    await deviceCodes.upsert('dc-old', { jti: 'dc-old', userCode: 'OLD-CODE' }, -1);

    expect(await sessions.findByUid('uid-a')).toEqual({ jti: 'sess-a', uid: 'uid-a', accountId: 'alice' });
    expect(await sessions.findByUid('uid-old')).toBeUndefined();
    expect(await sessions.findByUid('unknown')).toBeUndefined();
    expect(await deviceCodes.findByUserCode('WDJB-MJHT')).toEqual({ jti: 'dc-1', userCode: 'WDJB-MJHT', grantId: 'g-dc', uid: 'uid-a' });
    expect(await deviceCodes.findByUserCode('OLD-CODE')).toBeUndefined();
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

describe('oidc-provider running on the Drizzle adapter', () => {
  const issuer = 'https://op.latchkey.test';
  const client = { client_id: 'reporting-service', client_secret: 'a-client-secret-of-reasonable-length-0123456789' };
  const web = {
    client_id: 'web-app',
    client_secret: 'another-client-secret-of-reasonable-length-98765',
    redirect_uri: 'https://rp.latchkey.test/cb',
  };
  const basicFor = (id: string, secret: string) =>
    `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
  const basic = basicFor(client.client_id, client.client_secret);

  /** Every adapter call the provider makes, as `Model.method`. */
  const calls: string[] = [];

  function recordingAdapter(): OidcAdapterClass {
    const Base = createDrizzleAdapter(database.db);
    return class RecordingAdapter extends Base {
      constructor(name: string) {
        super(name);
        const model = name;
        for (const method of ['upsert', 'find', 'findByUid', 'findByUserCode', 'consume', 'destroy', 'revokeByGrantId'] as const) {
          const original = this[method].bind(this) as (...args: unknown[]) => Promise<unknown>;
          Object.defineProperty(this, method, {
            value: (...args: unknown[]) => {
              calls.push(`${model}.${method}`);
              return original(...args);
            },
          });
        }
      }
    };
  }

  function configuration(): Configuration {
    return {
      adapter: recordingAdapter(),
      clients: [
        {
          ...web,
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          redirect_uris: [web.redirect_uri],
          token_endpoint_auth_method: 'client_secret_basic',
        },
        {
          ...client,
          grant_types: ['client_credentials'],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: 'client_secret_basic',
          scope: 'reports:read',
        },
      ],
      scopes: ['openid', 'offline_access', 'reports:read'],
      features: {
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
        revocation: { enabled: true },
        // The provider's built-in login/consent pages drive the authorization-code test.
        devInteractions: { enabled: true },
      },
    };
  }

  async function serve(provider: Provider): Promise<{ server: Server; base: string }> {
    const server = createServer(provider.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { server, base: `http://127.0.0.1:${port}` };
  }

  async function stop(server: Server): Promise<void> {
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  }

  async function post(
    base: string,
    route: string,
    form: Record<string, string>,
    authorization = basic,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${base}${route}`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  it('persists a client_credentials token that a restarted provider still honours', async () => {
    calls.length = 0;
    const first = new Provider(issuer, configuration());
    const one = await serve(first);
    let token: string;
    try {
      const issued = await post(one.base, '/token', { grant_type: 'client_credentials', scope: 'reports:read' });
      expect(issued.status).toBe(200);
      expect(issued.body).toMatchObject({ token_type: 'Bearer', scope: 'reports:read' });
      token = String(issued.body['access_token']);

      // The provider stored it through the adapter, keyed by the opaque token value.
      const rows = await database.db
        .select()
        .from(oidcModels)
        .where(and(eq(oidcModels.model, 'ClientCredentials'), eq(oidcModels.id, token)));
      expect(rows).toHaveLength(1);
      expect(rows[0]!.expiresAt).toBeInstanceOf(Date);
      expect(rows[0]!.payload).toMatchObject({ jti: token, kind: 'ClientCredentials', clientId: client.client_id, scope: 'reports:read' });

      const introspected = await post(one.base, '/token/introspection', { token });
      expect(introspected.body).toMatchObject({ active: true, client_id: client.client_id, scope: 'reports:read' });
    } finally {
      await stop(one.server);
    }

    // "Restart": a brand-new provider (own adapter instances, empty caches) on the same database.
    const second = new Provider(issuer, configuration());
    const two = await serve(second);
    try {
      const introspected = await post(two.base, '/token/introspection', { token });
      expect(introspected.status).toBe(200);
      expect(introspected.body).toMatchObject({ active: true, client_id: client.client_id, scope: 'reports:read', token_type: 'Bearer' });

      // Revocation through the second provider destroys the row; both the database and introspection agree.
      expect((await post(two.base, '/token/revocation', { token })).status).toBe(200);
      expect(await storedRows('ClientCredentials')).toEqual([]);
      expect((await post(two.base, '/token/introspection', { token })).body).toEqual({ active: false });
      expect((await post(two.base, '/token/introspection', { token: 'not-a-token' })).body).toEqual({ active: false });
    } finally {
      await stop(two.server);
    }

    // Recorded for the report: which models and methods the provider actually used.
    expect(calls).toContain('ClientCredentials.upsert');
    expect(calls).toContain('ClientCredentials.find');
    expect(calls).toContain('ClientCredentials.destroy');
    console.info(`oidc-provider adapter calls: ${[...new Set(calls)].join(', ')}`);
  });

  it('runs an authorization-code flow (session, interaction, grant, code, tokens) across a restart, and a replayed code revokes the grant', async () => {
    calls.length = 0;
    const webBasic = basicFor(web.client_id, web.client_secret);
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');

    // A browser: a cookie jar (paths ignored) and manual redirects, rewritten from the issuer to the test server.
    const jar = new Map<string, string>();
    async function browse(base: string, url: string, form?: Record<string, string>): Promise<string> {
      const target = new URL(url.startsWith(issuer) ? url.slice(issuer.length) : url, base);
      const response = await fetch(target, {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: {
          cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '),
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(form ? { body: new URLSearchParams(form) } : {}),
      });
      for (const header of response.headers.getSetCookie()) {
        const [pair = ''] = header.split(';');
        const name = pair.slice(0, pair.indexOf('='));
        const value = pair.slice(pair.indexOf('=') + 1);
        if (value && !/expires=Thu, 01 Jan 1970/i.test(header)) jar.set(name, value);
        else jar.delete(name);
      }
      const body = await response.text();
      const location = response.headers.get('location');
      expect(
        response.status,
        `${target.pathname} should redirect: ${body
          .replace(/<[^>]*>/g, ' ')
          .replace(/\s+/g, ' ')
          .slice(-400)}`,
      ).toBe(303);
      return location!;
    }

    const first = new Provider(issuer, configuration());
    const one = await serve(first);
    let tokens: Record<string, unknown>;
    let code: string;
    try {
      const authorize = new URLSearchParams({
        client_id: web.client_id,
        response_type: 'code',
        redirect_uri: web.redirect_uri,
        scope: 'openid offline_access',
        prompt: 'consent',
        state: 'state-1',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      let location = await browse(one.base, `/auth?${authorize.toString()}`);
      const loginUid = location.split('/').pop()!;
      location = await browse(one.base, `/interaction/${loginUid}`, { prompt: 'login', login: 'alice' });
      location = await browse(one.base, location);
      const consentUid = location.split('/').pop()!;
      location = await browse(one.base, `/interaction/${consentUid}`, { prompt: 'consent' });
      location = await browse(one.base, location);
      const callback = new URL(location);
      expect(`${callback.origin}${callback.pathname}`).toBe(web.redirect_uri);
      expect(callback.searchParams.get('state')).toBe('state-1');
      code = callback.searchParams.get('code')!;

      const exchanged = await post(
        one.base,
        '/token',
        { grant_type: 'authorization_code', code, redirect_uri: web.redirect_uri, code_verifier: verifier },
        webBasic,
      );
      expect(exchanged.status).toBe(200);
      tokens = exchanged.body;
      expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'openid offline_access' });
      expect(typeof tokens['refresh_token']).toBe('string');
      expect(typeof tokens['id_token']).toBe('string');
    } finally {
      await stop(one.server);
    }

    const stored = await storedRows();
    const models = new Set(stored.map((row) => row.model));
    for (const model of ['Session', 'Grant', 'AuthorizationCode', 'AccessToken', 'RefreshToken']) expect(models).toContain(model);
    const grantId = stored.find((row) => row.model === 'AccessToken')!.grantId;
    expect(grantId).toEqual(expect.any(String));
    expect(stored.find((row) => row.model === 'Grant')!.id).toBe(grantId);
    // The code was consumed (not deleted), which is what lets the provider recognise a replay.
    expect(await adapterFor('AuthorizationCode').find(code)).toMatchObject({ grantId, consumed: expect.any(Number) });

    // "Restart": the second provider honours the refresh token (a confidential client's is not rotated by
    // default) and then recognises the code replay from the consumed mark stored by the first.
    const second = new Provider(issuer, configuration());
    const two = await serve(second);
    try {
      const refreshed = await post(
        two.base,
        '/token',
        { grant_type: 'refresh_token', refresh_token: String(tokens['refresh_token']) },
        webBasic,
      );
      expect(refreshed.status).toBe(200);
      expect(refreshed.body['access_token']).not.toBe(tokens['access_token']);
      expect(
        (await post(two.base, '/token/introspection', { token: String(refreshed.body['access_token']) }, webBasic)).body,
      ).toMatchObject({
        active: true,
        sub: 'alice',
        client_id: web.client_id,
      });

      const replay = await post(
        two.base,
        '/token',
        { grant_type: 'authorization_code', code, redirect_uri: web.redirect_uri, code_verifier: verifier },
        webBasic,
      );
      expect(replay.status).toBe(400);
      expect(replay.body).toMatchObject({ error: 'invalid_grant' });
      // Every token of the grant is gone, the grant too (default revokeGrantPolicy); the session stays.
      const left = await database.db.select({ model: oidcModels.model }).from(oidcModels).where(eq(oidcModels.grantId, grantId!));
      expect(left).toEqual([]);
      expect(await adapterFor('Grant').find(grantId!)).toBeUndefined();
      expect(await storedRows('Session')).toHaveLength(1);
      expect((await post(two.base, '/token/introspection', { token: String(refreshed.body['access_token']) }, webBasic)).body).toEqual({
        active: false,
      });
    } finally {
      await stop(two.server);
    }

    for (const call of [
      'Session.upsert',
      'Interaction.upsert',
      'Grant.upsert',
      'AuthorizationCode.consume',
      'RefreshToken.find',
      'AccessToken.revokeByGrantId',
    ]) {
      expect(calls).toContain(call);
    }
    console.info(`oidc-provider adapter calls: ${[...new Set(calls)].join(', ')}`);
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
