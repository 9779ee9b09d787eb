// Services: clients that call the API for themselves (OAuth 2.0 client credentials, RFC 6749 section 4.4), with no
// user. A service is registered with one organization and the API scopes it may ask for; its access token's `sub` is
// its client id. What configuration checks of a registration, and what the token endpoint checks of each request.

import type { IncomingMessage } from 'node:http';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { API_SCOPE_NAMES, type ApiScopeName } from '../scopes/vocabulary.js';
import { CLIENT_CREDENTIALS } from './offered.js';

/** Whether a client's registration makes it a service (the grant is offered only when one is registered). */
export const isService = (client: { grant_types?: readonly string[] | undefined }): boolean =>
  client.grant_types?.includes(CLIENT_CREDENTIALS) === true;

/**
 * The API scopes that concern a person's own account (their profile, passkeys, sessions, connected apps): a service
 * acts for no person, so it may neither be registered with them nor ask for them.
 */
export const USER_ONLY_SCOPES: readonly ApiScopeName[] = ['account:read', 'account:manage', 'sessions:manage'];

/** The API scopes a service may be registered with: the organization's records (documents, organization, roles). */
export const SERVICE_SCOPES: readonly ApiScopeName[] = API_SCOPE_NAMES.filter((scope) => !USER_ONLY_SCOPES.includes(scope));

export const isServiceScope = (scope: string): boolean => (SERVICE_SCOPES as readonly string[]).includes(scope);

/** How a client authenticates to the token endpoint for a service's tokens: a key of its own, or a secret. */
export const SERVICE_AUTH_METHODS = ['private_key_jwt', 'client_secret_basic', 'client_secret_post', 'client_secret_jwt'] as const;

/** What the token endpoint asks the application about the services it knows. */
export interface ServiceTokenPolicy {
  /** the API scopes the service is registered with (its `scope` metadata); undefined for a client that is no service */
  scopesOf(clientId: string): readonly string[] | undefined;
  /**
   * Why the service may not have a token now (its organization does not exist), or undefined when it may. The
   * reason goes to the log, never to the client, which is answered `invalid_client`.
   */
  refusal(clientId: string): Promise<string | undefined>;
  /** told of each refusal with its reason and the token request (the log, the audit trail) */
  onRefused?(clientId: string, reason: string, request: IncomingMessage): void;
}

type ProviderErrors = typeof import('oidc-provider').errors;

/**
 * Checks a service's token request before its token is made (called for every `ClientCredentials` token): it names
 * the scopes it wants, each one of the API's it is registered with (`invalid_scope` otherwise, naming the first
 * that is not), and its organization exists (`invalid_client` otherwise, the reason logged).
 */
export async function checkServiceToken(ctx: KoaContextWithOIDC, policy: ServiceTokenPolicy, errors: ProviderErrors): Promise<void> {
  const clientId = ctx.oidc.client!.clientId;
  const registered = policy.scopesOf(clientId);
  // Only services are given the grant; a client the application does not know as one gets nothing.
  if (registered === undefined) throw new errors.UnauthorizedClient('the client is not a service');
  const raw = ctx.oidc.params?.['scope'];
  const requested = typeof raw === 'string' ? raw.split(' ').filter(Boolean) : [];
  if (requested.length === 0) {
    throw new errors.InvalidScope(`a service names the scopes it asks for; this one may ask for: ${registered.join(' ')}`, '');
  }
  for (const scope of requested) {
    if (!isServiceScope(scope)) throw new errors.InvalidScope('the scope is not one a service may ask for', scope);
    if (!registered.includes(scope)) throw new errors.InvalidScope('the scope is beyond the registration of this service', scope);
  }
  const reason = await policy.refusal(clientId);
  if (reason !== undefined) {
    policy.onRefused?.(clientId, reason, ctx.req);
    // 401 invalid_client, as a failed authentication is answered (RFC 6749 section 5.2); the reason stays here.
    throw new errors.InvalidClientAuth(reason);
  }
}

/** Without services configured, no client is one. */
const NO_SERVICES: ServiceTokenPolicy = { scopesOf: () => undefined, refusal: async () => undefined };

type ExtraTokenClaims = NonNullable<Configuration['extraTokenClaims']>;

/**
 * The provider's `extraTokenClaims`: a service's token (no user, no sign-in: no amr, acr or auth_time) once its request
 * has passed `checkServiceToken`; every other token's claims as `claims` makes them.
 */
export function serviceTokenClaims(
  policy: ServiceTokenPolicy | undefined,
  errors: ProviderErrors,
  claims: ExtraTokenClaims,
): ExtraTokenClaims {
  return async (ctx, token) => {
    if (token.kind !== 'ClientCredentials') return claims(ctx, token);
    await checkServiceToken(ctx, policy ?? NO_SERVICES, errors);
    return undefined;
  };
}
