import { generateKeyPairSync } from 'node:crypto';
import { seedDemoData } from '@latchkey/db';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { BrowserSession } from './support/browser-session.js';
import { COST_REPORTED } from './support/cost.js';
import { demoAuthorization } from './support/oidc.js';
import { outboxOf, tokenOf } from './support/outbox.js';
import { postGraphQL, startLocalhostService } from './support/service.js';

/** A PKCS#8 PEM private key of each kind docs/configuration.md promises for SIGNING_KEY, and the algorithm it signs with. */
const KEY_KINDS = [
  { kind: 'RSA 2048', alg: 'RS256', pem: () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey },
  { kind: 'EC P-256', alg: 'ES256', pem: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey },
  { kind: 'EC P-384', alg: 'ES384', pem: () => generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey },
  { kind: 'EC P-521', alg: 'ES512', pem: () => generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey },
  { kind: 'Ed25519', alg: 'EdDSA', pem: () => generateKeyPairSync('ed25519').privateKey },
].map(({ pem, ...rest }) => ({ ...rest, pem: () => pem().export({ format: 'pem', type: 'pkcs8' }).toString() }));

describe('every signing key type docs/configuration.md promises completes a whole sign-in', () => {
  it.each(KEY_KINDS)(
    'a $kind PKCS#8 SIGNING_KEY: code + PKCE sign-in, ID token and access token signed $alg, the API accepts the token, refresh works',
    async ({ alg, pem }) => {
      const { service, base } = await startLocalhostService({ NODE_ENV: 'development', SIGNING_KEY: pem() });
      try {
        await seedDemoData(service.database);
        const discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
        expect(discovery['id_token_signing_alg_values_supported']).toEqual([alg]);

        const browser = new BrowserSession(base);
        const application = demoAuthorization(base);
        const start = await browser.request(application.path);
        expect(start.status).toBe(303);
        expect(start.location).toMatch(/^\/interaction\//);
        expect((await browser.request(start.location!)).status).toBe(200);

        const outbox = outboxOf(service.config.dataDir);
        const before = outbox.count();
        await browser.request('/ott/generate', { form: { username: 'alice@acme.test' } });
        const consumed = await browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, 'alice@acme.test')) } });
        expect(consumed.status).toBe(303);
        let location = consumed.location!;
        for (let hop = 0; hop < 5 && !location.startsWith(`${base}/callback`); hop++)
          location = (await browser.request(location)).location!;
        const tokens = await application.redeem(location);
        expect(tokens.status).toBe(200);

        const jwks = createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`));
        const idToken = await jwtVerify(tokens.json.id_token, jwks, { issuer: base, audience: 'latchkey-demo', algorithms: [alg] });
        expect(idToken.payload).toMatchObject({ email: 'alice@acme.test', amr: ['otp'] });
        expect(decodeProtectedHeader(tokens.json.access_token)).toMatchObject({ alg, typ: 'at+jwt' });
        const api = await postGraphQL(`${base}/graphql`, { query: '{ me { email } }' }, { token: tokens.json.access_token });
        expect(api.json).toEqual({ data: { me: { email: 'alice@acme.test' } }, extensions: COST_REPORTED });

        const refreshed = await fetch(`${base}/oidc/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.json.refresh_token!, client_id: 'latchkey-demo' }),
        });
        expect(refreshed.status).toBe(200);
        const renewed = (await refreshed.json()) as { id_token: string; access_token: string };
        await jwtVerify(renewed.id_token, jwks, { issuer: base, audience: 'latchkey-demo', algorithms: [alg] });
        expect((await postGraphQL(`${base}/graphql`, { query: '{ me { email } }' }, { token: renewed.access_token })).json).toEqual({
          data: { me: { email: 'alice@acme.test' } },
          extensions: COST_REPORTED,
        });
      } finally {
        await service.stop();
      }
    },
  );
});
