import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { and, eq, oidcModels } from '@latchkey/db';
import Provider, { type Configuration } from 'oidc-provider';
import { describe, expect, it } from 'vitest';
import { createDrizzleAdapter, randomToken, type OidcAdapterClass } from '../index.js';
import { adapterFor, database, storedRows, useOidcDatabase } from '../test-support/oidc-database.js';

// oidc-provider itself running on the Drizzle adapter, across restarts: what it calls, and that its state survives.

useOidcDatabase();

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
    const verifier = randomToken();
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
