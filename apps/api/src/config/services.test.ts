import { describe, expect, it } from 'vitest';
import { isRedirectless } from '@latchkey/auth/configuration';
import { ConfigError, loadConfig } from './load.js';

// Services in OIDC_CLIENTS (client credentials): what a registration must say, and what start-up refuses, naming
// the client at fault.

const service = (extra: Record<string, unknown> = {}) => ({
  client_id: 'reports',
  client_secret: 'a-service-secret-that-is-long-enough-0123456789',
  grant_types: ['client_credentials'],
  organization: 'acme',
  scope: 'documents:read',
  ...extra,
});

const load = (...clients: object[]) => loadConfig({ env: { OIDC_CLIENTS: JSON.stringify(clients) } });

function startUpError(...clients: object[]): string {
  try {
    load(...clients);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('start-up was not refused');
}

describe('a service registration (grant_types ["client_credentials"])', () => {
  it('needs no redirect URI: it gets none and no response type; VIEWER when no role is named', () => {
    const config = load(service());
    expect(config.auth.clients[0]).toMatchObject({ redirect_uris: [], response_types: [], grant_types: ['client_credentials'] });
    expect(config.auth.services).toEqual([{ clientId: 'reports', organization: 'acme', role: 'VIEWER', scopes: ['documents:read'] }]);
  });

  it('binds it to its organization, with a role below OWNER and the scopes it may ask for', () => {
    const config = load(service({ role: 'ADMIN', scope: 'documents:read documents:write organizations:manage' }));
    expect(config.auth.services[0]).toMatchObject({
      role: 'ADMIN',
      scopes: ['documents:read', 'documents:write', 'organizations:manage'],
    });
  });

  it('a private_key_jwt service registers its keys, not a secret', () => {
    const jwks = { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', alg: 'ES256', use: 'sig' }] };
    const { client_secret: _secret, ...withoutSecret } = service({ token_endpoint_auth_method: 'private_key_jwt', jwks });
    expect(load(withoutSecret).auth.services).toHaveLength(1);
  });

  it('the role OWNER stops start-up, naming the client', () => {
    const message = startUpError(service({ role: 'OWNER' }));
    expect(message).toContain('OIDC_CLIENTS.0 (service "reports"): role');
    expect(message).toContain('OWNER');
  });

  it.each([
    ['no organization', { organization: undefined }, 'organization'],
    ['an organization that is no slug', { organization: 'Acme Inc' }, 'organization'],
    ['an unknown role', { role: 'MANAGER' }, 'role'],
    ['no scope', { scope: undefined }, 'scope'],
    ['a scope about a person’s own account', { scope: 'documents:read account:read' }, 'scope: account:read'],
    ['sessions:manage', { scope: 'sessions:manage' }, 'scope: sessions:manage'],
    ['OpenID scopes', { scope: 'openid documents:read' }, 'scope: openid'],
    ['api (every scope, a person’s included)', { scope: 'api' }, 'scope: api'],
    ['a public client', { token_endpoint_auth_method: 'none', client_secret: undefined }, 'token_endpoint_auth_method'],
    [
      'another grant beside it',
      { grant_types: ['client_credentials', 'authorization_code'], redirect_uris: ['https://a.test/cb'] },
      'grant_types',
    ],
    ['first_party', { first_party: true }, 'first_party'],
    ['a client id that looks like an account id', { client_id: '0b6e8f5c-9a4e-4c1e-8a47-3f0f3c1d2e4b' }, 'client_id'],
  ])('%s stops start-up, naming the client and the metadata', (_case, extra, named) => {
    const message = startUpError(service(extra));
    expect(message).toContain('(service "');
    expect(message).toContain(named);
  });

  it('only a client whose grants send no browser back may go without redirect URIs', () => {
    const message = startUpError({ client_id: 'web', grant_types: ['authorization_code'] });
    expect(message).toContain('OIDC_CLIENTS.0.redirect_uris');
    expect(load({ client_id: 'introspector', grant_types: [], response_types: [] }).auth.clients[0]).toMatchObject({ redirect_uris: [] });
  });
});

describe('which grants need no redirect URI', () => {
  it('none, client credentials, the device grant (with refresh_token), or both; the code grant needs one', () => {
    const device = 'urn:ietf:params:oauth:grant-type:device_code';
    for (const grants of [[], ['client_credentials'], [device], [device, 'refresh_token'], ['client_credentials', device]]) {
      expect(isRedirectless(grants)).toBe(true);
    }
    for (const grants of [
      undefined,
      ['authorization_code'],
      ['authorization_code', 'refresh_token'],
      ['client_credentials', 'authorization_code'],
    ]) {
      expect(isRedirectless(grants)).toBe(false);
    }
  });
});
