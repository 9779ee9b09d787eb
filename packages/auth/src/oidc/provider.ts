import { OFFERED_GRANT_TYPES, OFFERED_RESPONSE_TYPES } from './offered.js';
import { API_SCOPE_NAMES, EVERY_API_SCOPE, OPENID_SCOPES } from '../scopes/vocabulary.js';
import { DPOP_ALGORITHMS } from '../principal/dpop-proof.js';
import type { Database } from '@latchkey/db';
import type Provider from 'oidc-provider';
import type { AsymmetricSigningAlgorithm, ClientMetadata, Configuration, KoaContextWithOIDC, ResourceServer } from 'oidc-provider';
import { findAccount } from './account.js';
import { loadOidcProvider } from './load-provider.js';
import { checkRequestedScopes, rememberedGrant } from './consent.js';
import { introspectionInFront, mayIntrospect } from './introspection.js';
import { userinfoInFront } from './userinfo.js';
import { barePage, providerPages } from './provider-pages.js';
import { type OnSignedOut, reportSignOut, sessionStillOpen } from './sign-out.js';
import { tokenEndpointCors } from './token-endpoint-cors.js';
import { loginPolicy, type SessionStandingQuery } from './login-policy.js';
import type { AccessTokenVerifier } from '../principal/access-token-verifier.js';
import { deriveCookieKeys } from './cookie-keys.js';
import { isService, serviceTokenClaims, type ServiceTokenPolicy } from './services.js';
import { SESSION_COOKIE_OPTIONS, SESSION_TTL_SECONDS } from './provider-session.js';
import { DEVICE_CODE_TTL_SECONDS, deviceFlow, type DeviceFlowOptions } from './device-flow.js';

/** Where the provider's endpoints live; discovery stays at `/.well-known/openid-configuration`. */
export const OIDC_ROUTES = {
  authorization: '/oidc/auth',
  token: '/oidc/token',
  userinfo: '/oidc/me',
  end_session: '/oidc/session/end',
  revocation: '/oidc/token/revocation',
  introspection: '/oidc/token/introspection',
  pushed_authorization_request: '/oidc/request',
  // The device grant (RFC 8628): a device asks for a code here; a person types it at code_verification.
  device_authorization: '/oidc/device/auth',
  code_verification: '/oidc/device',
  // The platform's own key endpoint: the provider and the API publish one and the same key set.
  jwks: '/.well-known/jwks.json',
} as const;

/** The login and consent interaction pages (served by the application, not the provider). */
export const INTERACTION_PATH = '/interaction';

export interface AuthorizationServerOptions {
  /** the issuer of every token (JWT_ISSUER, PUBLIC_URL by default) */
  issuer: string;
  /**
   * PUBLIC_URL: every absolute URL the provider builds (discovery, an interaction's return address) starts with its
   * origin, whatever Host or X-Forwarded-Host a request names.
   */
  publicUrl: string;
  /**
   * Whether X-Forwarded-For and X-Forwarded-Proto are read (Koa's `proxy`): only when the application rewrites
   * them before every request reaches the provider (TRUST_PROXY). @default false
   */
  trustForwardedHeaders?: boolean;
  /** the API's audience (resource indicator) that access tokens are issued for */
  apiAudience: string;
  /**
   * Other resource indicators (RFC 8707) that name the API: its RFC 9728 resource identifier (PUBLIC_URL), the
   * audience of an older version (so grants made for it still refresh). A token asked for one is issued for
   * `apiAudience`. @default []
   */
  apiAliases?: readonly string[];
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
  /**
   * Renders the provider's own pages (sign-out confirmation, signed out, errors) in the application's style.
   * `body` is HTML. @default a bare page
   */
  renderPage?: (title: string, body: string) => string;
  /** the assurance levels this provider reports as `acr`, weakest first (advertised in discovery) */
  acrValues: readonly string[];
  /**
   * Whether an existing session still needs the user at the login prompt: the multi-factor rules of the
   * account (validity durations included) or the requested `acr_values` are not met by the session's
   * factors. oidc-provider alone treats `acr_values` as voluntary; this makes them count.
   */
  sessionNeedsLogin?: (query: SessionStandingQuery) => Promise<boolean>;
  /**
   * Whether the provider's outgoing requests (back-channel logout tokens) may reach loopback and private addresses.
   * oidc-provider refuses them by default (SSRF protection); relying parties on an internal network need this.
   * @default false
   */
  privateNetworkFetch?: boolean;
  /**
   * The API's verifier of access tokens. With it the provider answers userinfo and introspection for the JWT access
   * tokens it issues (oidc-provider alone refuses both for a token with an audience). The CLI, which serves no HTTP,
   * builds the provider without it.
   */
  verifier?: AccessTokenVerifier;
  /** clients that may introspect any API access token (`resource_server: true`); others only their own tokens */
  resourceServerClientIds?: readonly string[];
  /**
   * Told when RP-initiated logout ends a provider session (the user chose to sign out of Latchkey), before the
   * browser is sent back to the client: the session is then listed as ended, as when it is ended from the account
   * page, so its access tokens are refused.
   */
  onSignedOut?: OnSignedOut;
  /**
   * the services (client credentials): their token requests are checked against their registrations (services.ts).
   * Without it every one is refused (the CLI's provider issues no tokens).
   */
  services?: ServiceTokenPolicy;
  /** the limits user-code entry (the device grant) is counted against; none: not limited (the CLI's provider) */
  userCodeLimits?: DeviceFlowOptions['limits'];
  /** told oidc-provider's "Unsupported runtime" warning (Node 20), kept out of the output, to say in the application's words */
  onRuntimeWarning?: (warning: string) => void;
}

/**
 * The scopes an access token for the API may carry: the API's (its vocabulary, and `api`, every one of them, which
 * first-party apps ask for), and the OpenID scopes whose claims the userinfo endpoint releases for it (as an access
 * token for an API audience carries them at Auth0). Each only when the request asked and the grant holds it.
 */
export const API_SCOPES = ['openid', 'email', 'profile', EVERY_API_SCOPE, ...API_SCOPE_NAMES].join(' ');

/** Every scope the provider offers (discovery's `scopes_supported`): OpenID's, `api`, and the API's own. */
const OFFERED_SCOPES: readonly string[] = [...OPENID_SCOPES, EVERY_API_SCOPE, ...API_SCOPE_NAMES];

/** Where amr / acr / auth_time of an access token come from: the code, device code or refresh token it is issued for. */
function loginOf(ctx: KoaContextWithOIDC) {
  const { AuthorizationCode, DeviceCode, RefreshToken } = ctx.oidc.entities;
  return AuthorizationCode ?? DeviceCode ?? RefreshToken;
}

/** What the provider's configuration is built from: the options, and what start-up derives from them once. */
interface ProviderSettings {
  options: AuthorizationServerOptions;
  errors: typeof import('oidc-provider').errors;
  accessTokenTTL: number;
  firstParty: ReadonlySet<string>;
  pages: ReturnType<typeof providerPages>;
  signingAlg: AsymmetricSigningAlgorithm;
  introspectionPolicy: { resourceServers: ReadonlySet<string> };
  /** every resource indicator that names the API: its audience and its aliases */
  apiIndicators: readonly string[];
  device: ReturnType<typeof deviceFlow>;
}

/** Whether a first-party grant holds every scope the provider offers (OpenID's, and the API's for its audience). */
function grantsEverything(grant: InstanceType<Provider['Grant']>, apiIndicators: readonly string[]): boolean {
  const openid = new Set(grant.getOIDCScope().split(' '));
  const holdsEveryApiScope = (indicator: string) => {
    const api = new Set(grant.getResourceScope(indicator).split(' '));
    return API_SCOPES.split(' ').every((scope) => api.has(scope));
  };
  return OFFERED_SCOPES.every((scope) => openid.has(scope)) && apiIndicators.every(holdsEveryApiScope);
}

/** Consent is implicit for first-party clients: their grant is created on first use. */
function firstPartyGrants(
  firstParty: ReadonlySet<string>,
  apiIndicators: readonly string[],
  db: Database,
): NonNullable<Configuration['loadExistingGrant']> {
  return async (ctx) => {
    const clientId = ctx.oidc.client!.clientId;
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session!.grantIdFor(clientId);
    const existing = grantId ? await ctx.oidc.provider.Grant.find(grantId) : undefined;
    // A third-party app's grant is remembered per user and client, across sessions (until revoked).
    if (!firstParty.has(clientId)) return existing ?? (await rememberedGrant(ctx, db));
    const grant = existing ?? new ctx.oidc.provider.Grant({ clientId, accountId: ctx.oidc.session!.accountId! });
    // Everything a first-party client may ask for; a grant made by an older version gets what it lacks.
    if (!existing || !grantsEverything(grant, apiIndicators)) {
      grant.addOIDCScope(OFFERED_SCOPES.join(' '));
      grant.addOIDCClaims(['email', 'email_verified', 'name']);
      for (const indicator of apiIndicators) grant.addResourceScope(indicator, API_SCOPES);
      await grant.save();
    }
    return grant;
  };
}

/** An access token's amr, acr, auth_time (and sid while its session is open), from the login it is issued for. */
const accessTokenClaims: NonNullable<Configuration['extraTokenClaims']> = async (ctx, token) => {
  if (token.kind !== 'AccessToken') return undefined;
  const login = loginOf(ctx);
  if (!login) return undefined;
  const sid = (await sessionStillOpen(ctx, login.sessionUid)) ? { sid: login.sessionUid as string } : {};
  return { amr: login.amr, acr: login.acr, auth_time: login.authTime, ...sid };
};

/** The provider's features: DPoP, revocation, PAR, back-channel logout, introspection, RP-initiated logout, resources. */
function providerFeatures({
  options,
  errors,
  accessTokenTTL,
  pages,
  signingAlg,
  introspectionPolicy,
  apiIndicators,
  device,
}: ProviderSettings): Configuration['features'] {
  const { apiAudience } = options;
  return {
    devInteractions: { enabled: false },
    // Services (client credentials): tokens with no user, for clients registered as services (services.ts); the grant
    // is offered (and advertised) only when there is one.
    clientCredentials: { enabled: options.clients.some(isService) },
    // DPoP (RFC 9449): a client that sends a proof to the token endpoint gets tokens bound to its key (`cnf.jkt`;
    // a public client's refresh token too); the API then wants a proof from that key on every request.
    dPoP: { enabled: true },
    // A client revokes only tokens issued to it (RFC 7009 2.1); JWT access tokens cannot be revoked (they end with
    // their session, or expire): the provider answers `unsupported_token_type` for them, as RFC 7009 allows.
    revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
    // PAR (RFC 9126): pushed at /oidc/request; a client may require it (`require_pushed_authorization_requests`).
    pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: false },
    // Clients that register a `backchannel_logout_uri` are told when a session they were used in ends.
    backchannelLogout: { enabled: true },
    // Introspection (RFC 7662) of the tokens the provider can find (refresh tokens); the JWT access tokens are
    // answered in front of it (`introspectionInFront`), under the same policy. (The bundled types lag the runtime.)
    introspection: {
      enabled: true,
      allowedPolicy: async (_ctx: unknown, client: { clientId: string; clientAuthMethod: string }, token: { clientId?: string }) =>
        mayIntrospect(introspectionPolicy, client, token.clientId ?? null, false),
    } as never,
    rpInitiatedLogout: { enabled: true, ...pages.signOut },
    // The device grant (RFC 8628) for clients that register it: see device-flow.ts.
    deviceFlow: device.feature,
    resourceIndicators: {
      enabled: true,
      defaultResource: () => apiAudience,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resourceIndicator): ResourceServer => {
        if (!apiIndicators.includes(resourceIndicator)) throw new errors.InvalidTarget();
        return {
          scope: API_SCOPES,
          audience: apiAudience,
          accessTokenTTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: signingAlg } },
        };
      },
    },
  };
}

/** The provider's configuration: keys and algorithms, cookies, claims and scopes, interactions, features, grants, lifetimes. */
function providerConfiguration(
  settings: ProviderSettings,
  interactionPolicy: typeof import('oidc-provider').interactionPolicy,
): Configuration {
  const { options, accessTokenTTL, firstParty, pages, signingAlg } = settings;
  const { signingJwk } = options;
  // The provider signs with this one key only: every client's ID tokens (its default is RS256, which an EC or
  // Ed25519 key cannot make) and everything discovery advertises use its algorithm.
  const signedWith = [signingAlg];
  return {
    adapter: options.adapter,
    clients: options.clients,
    jwks: { keys: [signingJwk as never] },
    enabledJWA: {
      idTokenSigningAlgValues: signedWith,
      userinfoSigningAlgValues: signedWith,
      introspectionSigningAlgValues: signedWith,
      authorizationSigningAlgValues: signedWith,
      dPoPSigningAlgValues: [...DPOP_ALGORITHMS],
    },
    // A registration that names no grant types gets what the provider offers: the code and refresh-token rotation.
    clientDefaults: { id_token_signed_response_alg: signingAlg, grant_types: [...OFFERED_GRANT_TYPES] },
    routes: OIDC_ROUTES,
    cookies: {
      keys: deriveCookieKeys(signingJwk.d!),
      long: SESSION_COOKIE_OPTIONS,
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    // How the user signed in is part of every ID token (RFC 8176 amr, acr, auth_time), not only on request.
    claims: {
      openid: ['sub', 'acr', 'amr', 'auth_time'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      sid: null,
    },
    acrValues: [...options.acrValues],
    // The OpenID scopes, `api` and the API's (resource) scopes, granted through the resource indicator. Listing them
    // here puts them in discovery's `scopes_supported`.
    scopes: [...OFFERED_SCOPES],
    findAccount: (_ctx, id) => findAccount(options.db, id),
    interactions: {
      url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}`,
      policy: checkRequestedScopes(
        options.sessionNeedsLogin ? loginPolicy(interactionPolicy, options.sessionNeedsLogin) : interactionPolicy.base(),
        interactionPolicy,
        settings.errors,
        firstParty,
      ),
    },
    // Authorization code with PKCE (S256) for every client, public or not, and nothing else (RFC 9700): no
    // implicit grant, no `id_token` or `code id_token` response types, so discovery advertises none of them.
    responseTypes: [...OFFERED_RESPONSE_TYPES],
    // oidc-provider hands every outgoing request a dispatcher that refuses special-use addresses: dropped only on request.
    ...(options.privateNetworkFetch
      ? {
          fetch: (input: string | URL | Request, init?: RequestInit) =>
            fetch(input, { ...init, dispatcher: undefined } as RequestInit & { dispatcher?: undefined }),
        }
      : {}),
    pkce: { required: () => true },
    clientBasedCORS: tokenEndpointCors as never,
    features: providerFeatures(settings),
    extraTokenClaims: serviceTokenClaims(options.services, settings.errors, accessTokenClaims),
    loadExistingGrant: firstPartyGrants(firstParty, settings.apiIndicators, options.db),
    // Refresh tokens rotate on every use. First-party clients get one whenever they may use the grant
    // (`offline_access` alone is dropped by OpenID Connect unless consent is prompted for, which they skip).
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client, code) =>
      client.grantTypeAllowed('refresh_token') && (code.scopes.has('offline_access') || firstParty.has(client.clientId)),
    ttl: {
      AccessToken: accessTokenTTL,
      AuthorizationCode: 60,
      DeviceCode: DEVICE_CODE_TTL_SECONDS,
      IdToken: 3600,
      Interaction: 3600,
      Grant: 14 * 86_400,
      Session: SESSION_TTL_SECONDS,
      RefreshToken: 14 * 86_400,
    },
    renderError: pages.renderError,
  };
}

/**
 * The OpenID provider (oidc-provider, certified): authorization code + PKCE, refresh-token rotation,
 * JWT access tokens for the API audience (`at+jwt`) with `amr`, `acr`, `auth_time`, ID tokens with the same,
 * RP-initiated logout, revocation and introspection. Everything it stores goes through `adapter`.
 */
export async function createAuthorizationServer(options: AuthorizationServerOptions): Promise<Provider> {
  const { default: ProviderClass, errors, interactionPolicy } = await loadOidcProvider(options.onRuntimeWarning);
  const { signingJwk, apiAudience, firstPartyClientIds } = options;
  if (typeof signingJwk.d !== 'string') throw new TypeError('the signing JWK must be a private key');
  const settings: ProviderSettings = {
    options,
    errors,
    accessTokenTTL: options.accessTokenTtlSeconds ?? 600,
    firstParty: new Set(firstPartyClientIds),
    pages: providerPages(options.renderPage),
    signingAlg: (typeof signingJwk.alg === 'string' ? signingJwk.alg : 'RS256') as AsymmetricSigningAlgorithm,
    introspectionPolicy: { resourceServers: new Set(options.resourceServerClientIds ?? []) },
    apiIndicators: [...new Set([apiAudience, ...(options.apiAliases ?? [])])],
    device: deviceFlow({
      path: OIDC_ROUTES.code_verification,
      tokenPath: OIDC_ROUTES.token,
      renderPage: options.renderPage ?? barePage,
      limits: options.userCodeLimits,
    }),
  };
  const { introspectionPolicy } = settings;
  const provider = new ProviderClass(options.issuer, providerConfiguration(settings, interactionPolicy));
  if (options.verifier) {
    provider.use(userinfoInFront({ path: OIDC_ROUTES.userinfo, verifier: options.verifier, db: options.db, provider }));
    provider.use(
      introspectionInFront({ ...introspectionPolicy, verifier: options.verifier, issuer: options.issuer, audience: apiAudience }),
    );
  }
  if (options.onSignedOut) provider.use(reportSignOut(options.onSignedOut));
  provider.use(settings.device.inFront as never);
  // Behind a TLS-terminating proxy X-Forwarded-Proto makes the provider's cookies Secure: read only when the
  // application has replaced every forwarded header with what a trusted proxy told it. X-Forwarded-Host never counts.
  provider.proxy = options.trustForwardedHeaders ?? false;
  // oidc-provider resolves every absolute URL against Koa's `href`: make that PUBLIC_URL's origin, not the Host header.
  const publicOrigin = new URL(options.publicUrl).origin;
  Object.defineProperty(provider.request, 'href', {
    get(this: { originalUrl: string }) {
      return `${publicOrigin}${this.originalUrl}`;
    },
  });
  return provider;
}
