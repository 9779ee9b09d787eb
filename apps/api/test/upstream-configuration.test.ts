import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { policyFile } from './support/policy-file.js';

// The upstream OpenID provider as configured: which settings go together, what is refused at start-up.

describe('configuration of the upstream OpenID provider', () => {
  const load = (env: Record<string, string>) => () =>
    loadConfig({ env: { NODE_ENV: 'test', ...env }, readFile: (file) => readFileSync(file, 'utf8') });
  const upstreamEnv = { UPSTREAM_ISSUER: 'https://accounts.example.com', UPSTREAM_CLIENT_ID: 'latchkey', UPSTREAM_CLIENT_SECRET: 'secret' };
  const requiring = policyFile({ rules: [{ name: 'sso', appliesTo: { everyone: true }, anyOf: [[{ factor: 'AUTHORIZATION_CODE' }]] }] });

  it('a rule requiring AUTHORIZATION_CODE stops start-up without UPSTREAM_ISSUER, and is accepted with it', () => {
    expect(load({ AUTH_POLICY_FILE: requiring })).toThrow(/requires AUTHORIZATION_CODE, which nothing on this server contributes/);
    expect(load({ AUTH_POLICY_FILE: requiring, ...upstreamEnv })).not.toThrow();
    const config = load({ ...upstreamEnv, UPSTREAM_NAME: 'Acme SSO' })();
    expect(config.auth.upstream).toEqual({
      issuer: 'https://accounts.example.com',
      clientId: 'latchkey',
      clientSecret: 'secret',
      name: 'Acme SSO',
    });
    // The button is named after the issuer's host by default.
    expect(load(upstreamEnv)().auth.upstream?.name).toBe('accounts.example.com');
    expect(load({})().auth.upstream).toBeUndefined();
  });

  it('an incomplete or unsafe upstream configuration stops start-up with a message naming it', () => {
    expect(load({ UPSTREAM_ISSUER: 'https://accounts.example.com' })).toThrow(
      /UPSTREAM_ISSUER, UPSTREAM_CLIENT_ID and UPSTREAM_CLIENT_SECRET go together/,
    );
    expect(load({ UPSTREAM_CLIENT_ID: 'x', UPSTREAM_CLIENT_SECRET: 'y' })).toThrow(/go together/);
    expect(load({ UPSTREAM_NAME: 'Acme SSO' })).toThrow(/UPSTREAM_NAME: only used with UPSTREAM_ISSUER/);
    expect(load({ ...upstreamEnv, UPSTREAM_ISSUER: 'http://accounts.example.com' })).toThrow(/UPSTREAM_ISSUER: must be an https URL/);
    expect(load({ ...upstreamEnv, UPSTREAM_ISSUER: 'accounts.example.com' })).toThrow(
      /UPSTREAM_ISSUER: "accounts.example.com" is not a URL/,
    );
    expect(load({ ...upstreamEnv, UPSTREAM_ISSUER: 'https://accounts.example.com/?tenant=1' })).toThrow(
      /no query, fragment or credentials/,
    );
    expect(load({ ...upstreamEnv, UPSTREAM_ISSUER: 'http://127.0.0.1:8080' })).not.toThrow();
  });
});
