import type { Database } from '@latchkey/db';
import type Provider from 'oidc-provider';
import type { AsymmetricSigningAlgorithm, ClientMetadata, Configuration, KoaContextWithOIDC, ResourceServer } from 'oidc-provider';
import { findAccount } from './account.js';
import { deriveCookieKeys } from './cookie-keys.js';

/** Where the provider's endpoints live; discovery stays at `/.well-known/openid-configuration`. */
export const OIDC_ROUTES = {
  authorization: '/oidc/auth',
  token: '/oidc/token',
  userinfo: '/oidc/me',
  end_session: '/oidc/session/end',
  revocation: '/oidc/token/revocation',
  introspection: '/oidc/token/introspection',
  // The platform's own key endpoint: the provider and the API publish one and the same key set.
  jwks: '/.well-known/jwks.json',
} as const;

/** The login and consent interaction pages (served by the application, not the provider). */
export const INTERACTION_PATH = '/interaction';

export interface AuthorizationServerOptions {
  /** PUBLIC_URL: the issuer of every token */
  issuer: string;
  /** the API's audience (resource indicator) that access tokens are issued for */
  apiAudience: string;
  /** the private signing key as a JWK with `kid` and `alg` (the same key the API verifies with) */
  signingJwk: { kid?: string; alg?: string; d?: string } & Record<string, unknown>;
  db: Database;
  /** an oidc-provider adapter class (durable: see createDrizzleAdapter) */
  adapter: NonNullable<Configuration['adapter']>;
  clients: ClientMetadata[];
  /** clients whose consent is implicit (first-party) */
  firstPartyClientIds: readonly string[];
  /** @default 600 (10 minutes) */
  accessTokenTtlSeconds?: number;
}

/** The authentication context classes this provider reports: one-time token, passkey. */
export const ACR_VALUES = ['urn:latchkey:acr:otp', 'urn:latchkey:acr:passkey'] as const;

/** Scopes an access token for the API may carry. */
export const API_SCOPES = 'api';

/** Where amr / acr / auth_time of an access token come from: the code or refresh token it is issued for. */
function loginOf(ctx: KoaContextWithOIDC) {
  const { AuthorizationCode, RefreshToken } = ctx.oidc.entities;
  return AuthorizationCode ?? RefreshToken;
}

/**
 * The OpenID provider (oidc-provider, certified): authorization code + PKCE, refresh-token rotation,
 * JWT access tokens for the API audience (`at+jwt`) with `amr`, `acr`, `auth_time`, ID tokens with the same,
 * RP-initiated logout, revocation and introspection. Everything it stores goes through `adapter`.
 */
export async function createAuthorizationServer(options: AuthorizationServerOptions): Promise<Provider> {
  // Loaded on first use: oidc-provider 9 prints an "Unsupported runtime" warning on Node 20 when imported, which
  // has no place in the output of CLI commands that never start the provider.
  const { default: ProviderClass, errors } = await import('oidc-provider');
  const { signingJwk, apiAudience, firstPartyClientIds } = options;
  if (typeof signingJwk.d !== 'string') throw new TypeError('the signing JWK must be a private key');
  const accessTokenTTL = options.accessTokenTtlSeconds ?? 600;
  const firstParty = new Set(firstPartyClientIds);

  const configuration: Configuration = {
    adapter: options.adapter,
    clients: options.clients,
    jwks: { keys: [signingJwk as never] },
    routes: OIDC_ROUTES,
    cookies: {
      keys: deriveCookieKeys(signingJwk.d),
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    // How the user signed in is part of every ID token (RFC 8176 amr, acr, auth_time), not only on request.
    claims: {
      openid: ['sub', 'acr', 'amr', 'auth_time'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      sid: null,
    },
    acrValues: [...ACR_VALUES],
    // OpenID scopes only: `api` is the API's (resource) scope, granted through the resource indicator.
    scopes: ['openid', 'offline_access', 'email', 'profile'],
    findAccount: (_ctx, id) => findAccount(options.db, id),
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}` },
    // PKCE (S256) for every client, public or not.
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      // (the bundled types lag the runtime here: introspection is a supported feature)
      introspection: { enabled: true } as never,
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => apiAudience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator): ResourceServer => {
          if (resourceIndicator !== apiAudience) throw new errors.InvalidTarget();
          return {
            scope: API_SCOPES,
            audience: apiAudience,
            accessTokenTTL,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: (typeof signingJwk.alg === 'string' ? signingJwk.alg : 'RS256') as AsymmetricSigningAlgorithm } },
          };
        },
      },
    },
    extraTokenClaims: (ctx, token) => {
      if (token.kind !== 'AccessToken') return undefined;
      const login = loginOf(ctx);
      if (!login) return undefined;
      return { amr: login.amr, acr: login.acr, auth_time: login.authTime };
    },
    // Consent is implicit for first-party clients: their grant is created on first use.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      if (!firstParty.has(ctx.oidc.client!.clientId)) return undefined;
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid offline_access email profile');
      grant.addOIDCClaims(['email', 'email_verified', 'name']);
      grant.addResourceScope(apiAudience, API_SCOPES);
      await grant.save();
      return grant;
    },
    // Refresh tokens rotate on every use. First-party clients get one whenever they may use the grant
    // (`offline_access` alone is dropped by OpenID Connect unless consent is prompted for, which they skip).
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client, code) =>
      client.grantTypeAllowed('refresh_token') && (code.scopes.has('offline_access') || firstParty.has(client.clientId)),
    ttl: {
      AccessToken: accessTokenTTL,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 3600,
      Grant: 14 * 86_400,
      Session: 14 * 86_400,
      RefreshToken: 14 * 86_400,
    },
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      const text = (value: unknown) => String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
      ctx.body = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Sign-in error</title><main><h1>Sign-in error</h1><p>${text(out.error)}: ${text(out.error_description)}</p></main></html>`;
    },
  };
  const provider = new ProviderClass(options.issuer, configuration);
  // Behind a TLS-terminating proxy, trust X-Forwarded-Proto so cookies are Secure and URLs https.
  provider.proxy = true;
  return provider;
}
