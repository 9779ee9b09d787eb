import { createPublicKey, type KeyObject } from 'node:crypto';
import { base64url, decodeJwt, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { challengeOf, postGraphQL, startTestService, type TestService } from './support/service.js';
import { COST_REPORTED } from './support/cost.js';

// Spec "Authentication > Credentials presented to the API", driven over real HTTP against the real server.
// Only a valid access token makes a user; every other credential leaves the caller a guest, and a guest
// asking for `viewer` (which requires sign-in) is refused whole: 401, UNAUTHENTICATED, no `data`.

const GRAPHQL_RESPONSE = 'application/graphql-response+json';
const VIEWER = '{ viewer { subject } }';

type Response = Awaited<ReturnType<typeof postGraphQL>>;

/** POST a query with an exact Authorization header (or none). */
function ask(service: TestService, query: string, authorization?: string, accept = GRAPHQL_RESPONSE): Promise<Response> {
  return postGraphQL(service.graphqlUrl, { query }, { accept, headers: authorization ? { authorization } : {} });
}

function expectSignedIn(response: Response, subject: string): void {
  expect(response.status, response.text).toBe(200);
  expect(response.json.errors).toBeUndefined();
  expect(response.json.data.viewer.subject).toBe(subject);
}

/** The route-level refusal of a guest: 401 (or 200 under application/json), UNAUTHENTICATED, no `data`. */
function expectRefused(response: Response, { presented = true, status = 401 } = {}): void {
  expect(response.status, response.text).toBe(status);
  expect(response.json).toBeDefined();
  expect(response.json).not.toHaveProperty('data');
  expect(response.json.errors).toHaveLength(1);
  expect(response.json.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  const challenge = response.headers.get('www-authenticate') ?? '';
  expect(challenge).toMatch(/^Bearer\b/);
  if (presented) expect(challenge).toContain('invalid_token');
  else expect(challenge).not.toContain('invalid_token');
}

const encode = (value: unknown) => base64url.encode(JSON.stringify(value));
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('Authentication > Credentials presented to the API', () => {
  let service: TestService;
  let issuer: string;
  let audience: string;

  interface ForgeOptions {
    /** claims merged over the valid defaults (iss, aud, sub, iat, exp) */
    claims?: Record<string, unknown>;
    /** claims removed from the defaults */
    omit?: string[];
    /** header members merged over { alg: RS256, kid: <server kid>, typ: at+jwt }; undefined removes one */
    header?: Record<string, unknown>;
    /** signing key; defaults to the server's own private key */
    key?: KeyObject | CryptoKey | Uint8Array;
  }

  /** A token built from scratch with jose; with no options it is exactly what the server accepts. */
  async function forge({ claims = {}, omit = [], header = {}, key = service.signingKey.key }: ForgeOptions = {}) {
    const iat = nowSeconds();
    const payload: Record<string, unknown> = { iss: issuer, aud: audience, sub: 'forged-user', iat, exp: iat + 600, ...claims };
    for (const name of omit) delete payload[name];
    const protectedHeader = { alg: 'RS256', kid: service.signingKey.kid, typ: 'at+jwt', ...header };
    for (const [name, value] of Object.entries(protectedHeader))
      if (value === undefined) delete (protectedHeader as Record<string, unknown>)[name];
    return new SignJWT(payload).setProtectedHeader(protectedHeader as { alg: string }).sign(key);
  }

  /** The server's public signing key, as any client can fetch it. */
  async function publishedKey(): Promise<JWK> {
    const response = await fetch(`${service.url}/.well-known/jwks.json`);
    expect(response.status).toBe(200);
    const { keys } = (await response.json()) as { keys: JWK[] };
    const jwk = keys.find((key) => key.kid === service.signingKey.kid);
    expect(jwk).toBeDefined();
    expect(jwk).not.toHaveProperty('d');
    return jwk!;
  }

  beforeAll(async () => {
    service = await startTestService();
    issuer = service.config.tokens.issuer;
    audience = service.config.tokens.audience;
  });
  afterAll(() => service?.stop());

  describe('rule 1: the signature of a bearer token is always verified', () => {
    it('a valid access token (Authorization: Bearer) yields a user', async () => {
      expectSignedIn(await ask(service, VIEWER, `Bearer ${await service.token('user-1')}`), 'user-1');
    });

    it('the forging helper, unaltered, yields a user (so every refusal below is caused by its one change)', async () => {
      expectSignedIn(await ask(service, VIEWER, `Bearer ${await forge()}`), 'forged-user');
    });

    it('the scheme name is case-insensitive (RFC 6750)', async () => {
      expectSignedIn(await ask(service, VIEWER, `bearer ${await service.token('user-2')}`), 'user-2');
    });

    it('an unsigned token (alg: none) is refused', async () => {
      const iat = nowSeconds();
      const payload = { iss: issuer, aud: audience, sub: 'attacker', iat, exp: iat + 600 };
      const token = `${encode({ alg: 'none', typ: 'at+jwt' })}.${encode(payload)}.`;
      expectRefused(await ask(service, VIEWER, `Bearer ${token}`));
      // the same with the server's kid, in case a key lookup by kid came before the alg check
      const withKid = `${encode({ alg: 'none', typ: 'at+jwt', kid: service.signingKey.kid })}.${encode(payload)}.`;
      expectRefused(await ask(service, VIEWER, `Bearer ${withKid}`));
    });

    it('an HS256 token whose HMAC secret is the server public key (SPKI PEM) is refused', async () => {
      const jwk = await publishedKey();
      const pem = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' })
        .export({ type: 'spki', format: 'pem' })
        .toString();
      for (const secret of [pem, pem.trim()]) {
        const token = await forge({ header: { alg: 'HS256' }, key: new TextEncoder().encode(secret) });
        expectRefused(await ask(service, VIEWER, `Bearer ${token}`));
      }
    });

    it('an HS256 token whose HMAC secret is another form of the public key (n bytes, DER, JWK JSON) is refused', async () => {
      const jwk = await publishedKey();
      const publicKey = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
      const secrets: Uint8Array[] = [
        base64url.decode(jwk.n!),
        new TextEncoder().encode(jwk.n!),
        publicKey.export({ type: 'spki', format: 'der' }),
        publicKey.export({ type: 'pkcs1', format: 'der' }),
        new TextEncoder().encode(JSON.stringify(jwk)),
      ];
      for (const secret of secrets) {
        const token = await forge({ header: { alg: 'HS256' }, key: secret });
        expectRefused(await ask(service, VIEWER, `Bearer ${token}`));
      }
    });

    it('a validly signed token whose payload was altered (sub changed, signature kept) is refused', async () => {
      const original = await service.token('user-1');
      const [header, payload, signature] = original.split('.');
      const claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload!))) as Record<string, unknown>;
      const tampered = `${header}.${encode({ ...claims, sub: 'admin' })}.${signature}`;
      expectSignedIn(await ask(service, VIEWER, `Bearer ${original}`), 'user-1'); // the original is cached now
      expectRefused(await ask(service, VIEWER, `Bearer ${tampered}`));
    });

    it('a token signed by an unknown key under a kid the server does not know is refused', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ header: { kid: 'unknown-kid' }, key: privateKey })}`));
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ header: { kid: undefined }, key: privateKey })}`));
    });

    it('a token carrying the server kid but signed by a different key is refused', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ key: privateKey })}`));
    });

    it('a token signed by the right key with an alg outside the allow-list (PS256) is refused', async () => {
      const key = await importJWK({ ...service.privateJwk, alg: 'PS256' }, 'PS256');
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ header: { alg: 'PS256' }, key })}`));
    });
  });

  describe('rule 1: a verified signature is not enough, the claims must hold', () => {
    it('an expired token (exp beyond the 30 s clock skew) is refused', async () => {
      const iat = nowSeconds() - 700;
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ claims: { iat, exp: nowSeconds() - 60 } })}`));
    });

    it('a token that is not yet valid (nbf 5 minutes ahead) is refused', async () => {
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ claims: { nbf: nowSeconds() + 300 } })}`));
    });

    it('a token from another issuer is refused', async () => {
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ claims: { iss: 'https://evil.example' } })}`));
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ omit: ['iss'] })}`));
    });

    it('a token for another audience is refused', async () => {
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ claims: { aud: 'urn:someone:else' } })}`));
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ omit: ['aud'] })}`));
    });

    it('a token that is not an access token (typ JWT, e.g. an ID token, or no typ) is refused', async () => {
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ header: { typ: 'JWT' } })}`));
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ header: { typ: undefined } })}`));
    });

    it('a token without sub (or with an empty sub) is refused', async () => {
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ omit: ['sub'] })}`));
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ claims: { sub: '' } })}`));
    });

    it('a token without exp is refused', async () => {
      expectRefused(await ask(service, VIEWER, `Bearer ${await forge({ omit: ['exp'] })}`));
    });

    it('a certificate-bound token (cnf x5t#S256) is refused, on GraphQL and REST alike', async () => {
      const token = await forge({ claims: { cnf: { 'x5t#S256': 'bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2' } } });
      expectRefused(await ask(service, VIEWER, `Bearer ${token}`));
      const rest = await fetch(`${service.url}/api/documents`, { headers: { authorization: `Bearer ${token}` } });
      expect(rest.status).toBe(401);
      expect(rest.headers.get('www-authenticate')).toContain('invalid_token');
    });

    it('a DPoP-bound token (cnf jkt) sent as a bearer token is refused with the DPoP challenge (RFC 9449 section 7.2), on GraphQL and REST alike', async () => {
      const token = await forge({ claims: { cnf: { jkt: 'q3Z0TtA9JcN-7bOwRoVjX2YjLhQXRp8DFYQGjY-0tXk' } } });
      const graphql = await ask(service, VIEWER, `Bearer ${token}`);
      expect(graphql.status).toBe(401);
      expect(graphql.json.errors[0].extensions.code).toBe('UNAUTHENTICATED');
      expect(graphql.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token", algs="[^"]*ES256/);
      const rest = await fetch(`${service.url}/api/documents`, { headers: { authorization: `Bearer ${token}` } });
      expect(rest.status).toBe(401);
      expect(rest.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);
    });
  });

  describe('rule 2: a request with no valid credential is a guest', () => {
    it('garbage bearer values are refused ("abc", "a.b.c")', async () => {
      expectRefused(await ask(service, VIEWER, 'Bearer abc'));
      expectRefused(await ask(service, VIEWER, 'Bearer a.b.c'));
    });

    it('an oversized bearer value (12 KB, past the verifier length limit) is refused', async () => {
      expectRefused(await ask(service, VIEWER, `Bearer ${'a'.repeat(4 * 1024)}.${'b'.repeat(4 * 1024)}.${'c'.repeat(4 * 1024)}`));
    });

    it('a 20 KB bearer value never yields a user', async () => {
      const response = await ask(service, VIEWER, `Bearer ${'a'.repeat(7 * 1024)}.${'b'.repeat(7 * 1024)}.${'c'.repeat(6 * 1024)}`);
      // Node's HTTP parser refuses headers over 16 KB with 431 before the app runs; the app refuses anything that reaches it.
      expect([401, 431], response.text).toContain(response.status);
      if (response.status === 401) expectRefused(response);
      expect(response.text).not.toContain('"data"');
    });

    it('a credential that is not a Bearer token (Basic) is refused', async () => {
      expectRefused(await ask(service, VIEWER, 'Basic dXNlcjpwYXNz'));
      expectRefused(await ask(service, VIEWER, 'Bearer'));
    });

    it('with no credential at all, the refusal asks for a token without calling one invalid', async () => {
      const response = await ask(service, VIEWER);
      expectRefused(response, { presented: false });
      expect(response.headers.get('www-authenticate')).toBe(challengeOf(service, 'Bearer'));
    });

    it('under Accept: application/json the refusal is status 200 with the same error body', async () => {
      const expired = await forge({ claims: { iat: nowSeconds() - 700, exp: nowSeconds() - 60 } });
      for (const authorization of [`Bearer ${expired}`, 'Bearer abc', 'Basic dXNlcjpwYXNz']) {
        const strict = await ask(service, VIEWER, authorization, GRAPHQL_RESPONSE);
        const legacy = await ask(service, VIEWER, authorization, 'application/json');
        expectRefused(legacy, { status: 200 });
        expect(legacy.json).toEqual({ ...strict.json, extensions: COST_REPORTED });
      }
    });

    it('a public query still runs for a caller whose token is invalid (an invalid token is a guest)', async () => {
      const expired = await forge({ claims: { iat: nowSeconds() - 700, exp: nowSeconds() - 60 } });
      for (const authorization of [`Bearer ${expired}`, 'Bearer abc', 'Basic dXNlcjpwYXNz', undefined]) {
        const response = await ask(service, '{ status { version } }', authorization);
        expect(response.status, response.text).toBe(200);
        expect(response.json.errors).toBeUndefined();
        expect(response.json.data.status.version).toBe('0.1.0-test');
      }
    });

    it('a guest operation mixing public and non-public fields is refused whole, with no data', async () => {
      const mixed = '{ status { version } viewer { subject } }';
      expectRefused(await ask(service, mixed, 'Bearer abc'));
      expectRefused(await ask(service, mixed), { presented: false });
      // and the same operation with a valid token runs in full
      const response = await ask(service, mixed, `Bearer ${await service.token('user-1')}`);
      expect(response.status).toBe(200);
      expect(response.json.data).toEqual({ status: { version: '0.1.0-test' }, viewer: { subject: 'user-1' } });
    });

    it('the claims the application needs are copied onto the user (subject, amr, acr, authTime, expiresAt, scope)', async () => {
      const token = await service.token('claims-user', {
        amr: ['otp', 'swk', 'mfa'],
        acr: 'urn:latchkey:acr:mfa',
        scope: ['openid', 'profile'],
      });
      const claims = decodeJwt(token);
      const response = await ask(service, '{ viewer { subject amr acr authTime expiresAt scope } }', `Bearer ${token}`);
      expect(response.status, response.text).toBe(200);
      expect(response.json).toEqual({
        data: {
          viewer: {
            subject: 'claims-user',
            amr: ['otp', 'swk', 'mfa'],
            acr: 'urn:latchkey:acr:mfa',
            authTime: new Date((claims['auth_time'] as number) * 1000).toISOString(),
            expiresAt: new Date(claims.exp! * 1000).toISOString(),
            scope: ['openid', 'profile'],
          },
        },
        extensions: COST_REPORTED,
      });
    });
  });

  describe('rule 5: the user is read from the GraphQL context, verified once per operation', () => {
    it('every field of one operation sees the same verified user', async () => {
      const token = await service.token('context-user', { amr: ['otp', 'swk'] });
      const response = await ask(service, '{ a: viewer { subject amr } b: viewer { subject } c: viewer { amr } }', `Bearer ${token}`);
      expect(response.status, response.text).toBe(200);
      expect(response.json.data).toEqual({
        a: { subject: 'context-user', amr: ['otp', 'swk'] },
        b: { subject: 'context-user' },
        c: { amr: ['otp', 'swk'] },
      });
    });
  });

  describe('rule 3: access tokens are short-lived, and a cached token still expires', () => {
    let strict: TestService;
    beforeAll(async () => {
      strict = await startTestService({ JWT_CLOCK_SKEW: '0s' });
    });
    afterAll(() => strict?.stop());

    it('a verified (cached) token stops working once it expires', async () => {
      const token = await strict.token('short-lived', { ttlSeconds: 2 });
      expectSignedIn(await ask(strict, VIEWER, `Bearer ${token}`), 'short-lived');
      expectSignedIn(await ask(strict, VIEWER, `Bearer ${token}`), 'short-lived');
      expect(strict.app.verifier.cacheEntries).toBeGreaterThan(0);
      // Asked again until refused (the service's clock is its own): the cache must not outlive the token's `exp`.
      await expect
        .poll(async () => (await ask(strict, VIEWER, `Bearer ${token}`)).status, { timeout: 20_000, interval: 100 })
        .not.toBe(200);
      expectRefused(await ask(strict, VIEWER, `Bearer ${token}`));
    });
  });
});
