import { isDatabaseUnavailable, RETRY_AFTER_SECONDS } from '@latchkey/db';
import { decodeProtectedHeader } from 'jose';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { AccessTokenVerifier } from '../principal/access-token-verifier.js';
import type { SignedInCaller } from '../principal/access-token-verifier.js';

/** Who may introspect what: a client its own tokens; a resource server any API access token; a public client none. */
export interface IntrospectionPolicy {
  /** clients marked `resource_server: true`: they may introspect every API access token */
  resourceServers: ReadonlySet<string>;
}

/** The client as the provider authenticated it. */
interface AuthenticatedClient {
  clientId: string;
  clientAuthMethod: string;
}

/** Whether `client` may learn about a token issued to `tokenClientId` (RFC 7662 section 4: answered as inactive otherwise). */
export function mayIntrospect(
  policy: IntrospectionPolicy,
  client: AuthenticatedClient,
  tokenClientId: string | null,
  apiToken: boolean,
): boolean {
  if (client.clientAuthMethod === 'none') return false;
  if (tokenClientId === client.clientId) return true;
  return apiToken && policy.resourceServers.has(client.clientId);
}

export interface IntrospectionOptions extends IntrospectionPolicy {
  /** the API's verifier: signature, expiry and the ended sessions decide whether an access token is active */
  verifier: AccessTokenVerifier;
  issuer: string;
  audience: string;
}

function isJwt(token: unknown): token is string {
  if (typeof token !== 'string') return false;
  try {
    return decodeProtectedHeader(token) !== undefined;
  } catch {
    return false;
  }
}

/** RFC 7662's answer for an active access token. */
function activeAnswer(inspected: SignedInCaller, options: IntrospectionOptions): Record<string, unknown> {
  return {
    active: true,
    sub: inspected.subject,
    client_id: inspected.clientId ?? undefined,
    scope: inspected.scope.join(' ') || undefined,
    exp: inspected.expiresAt,
    iat: inspected.issuedAt ?? undefined,
    sid: inspected.sessionId ?? undefined,
    jti: inspected.tokenId ?? undefined,
    iss: options.issuer,
    aud: options.audience,
    token_type: inspected.boundKey ? 'DPoP' : 'Bearer',
    ...(inspected.boundKey ? { cnf: { jkt: inspected.boundKey } } : {}),
  };
}

/**
 * Introspection (RFC 7662) of the JWT access tokens this provider issues, which oidc-provider refuses to introspect
 * (`unsupported_token_type`, not one of RFC 7662's answers). The provider still authenticates the client exactly as
 * it requires (a failure stays its 401 `invalid_client`) and answers every other token (refresh tokens) itself;
 * once it has refused a structured token for an authenticated client, this answers instead: active when the API's
 * verifier accepts the token and its session has not ended, and the client may know about it (`mayIntrospect`),
 * else `{ "active": false }`.
 */
export function introspectionInFront(options: IntrospectionOptions) {
  return async function introspection(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
    await next();
    if (ctx.oidc?.route !== 'introspection' || ctx.status !== 400) return;
    const refusal = ctx.body as { error?: unknown } | undefined;
    const client = ctx.oidc.client as AuthenticatedClient | undefined;
    const token = ctx.oidc.params?.['token'];
    if (refusal?.error !== 'unsupported_token_type' || !client || !isJwt(token)) return;
    let inspected: SignedInCaller | null;
    try {
      inspected = await options.verifier.inspect(token);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      ctx.status = 503;
      ctx.set('retry-after', String(RETRY_AFTER_SECONDS));
      ctx.body = { error: 'temporarily_unavailable', error_description: 'try again shortly' };
      return;
    }
    const allowed = inspected !== null && mayIntrospect(options, client, inspected.clientId, true);
    ctx.status = 200;
    ctx.body = allowed ? activeAnswer(inspected!, options) : { active: false };
  };
}
