import { type Database, isDatabaseUnavailable, RETRY_AFTER_SECONDS } from '@latchkey/db';
import type { KoaContextWithOIDC, Provider } from 'oidc-provider';
import { type AccessTokenVerifier, challengeFor } from '../principal/access-token-verifier.js';
import type { SignedInCaller } from '../principal/access-token-verifier.js';
import { findAccount } from './account.js';

/** Which claims each OpenID scope releases at the userinfo endpoint (the provider's `claims` configuration). */
const CLAIMS_OF_SCOPE: Readonly<Record<string, readonly string[]>> = {
  email: ['email', 'email_verified'],
  profile: ['name'],
};

export interface UserinfoOptions {
  /** the path the provider advertises as `userinfo_endpoint` */
  path: string;
  /** the API's verifier: the access tokens are the API's (`at+jwt` for its audience), Bearer or DPoP */
  verifier: AccessTokenVerifier;
  db: Database;
  /** the provider this answers in front of (its clients decide CORS) */
  provider: Provider;
}

/** What the endpoint answers; `clientId`: the token's client, whose origins may read a browser's answer. */
type Answer = { status: number; body: Record<string, unknown>; challenge?: string; clientId?: string };

const refused = (status: number, error: string, description: string, challenge: string): Answer => ({
  status,
  body: { error, error_description: description },
  challenge,
});

/**
 * The userinfo endpoint (OpenID Connect Core 5.3) for the access tokens this provider issues. oidc-provider's own
 * refuses every token that has an audience, and ours are JWTs for the API: this answers in front of it with the
 * API's verifier (signature, expiry, DPoP proof of a bound token, ended sessions), then the account's claims of
 * the scopes the token carries (`openid` required). Preflights and CORS follow the provider's rule for userinfo:
 * the origins of the token's client's redirect URIs.
 */
export function userinfoInFront(options: UserinfoOptions) {
  const { path, verifier, db, provider } = options;

  async function answer(ctx: KoaContextWithOIDC): Promise<Answer> {
    const header = ctx.get('authorization');
    const proofOf = () => ({ proof: ctx.get('dpop') || undefined, method: ctx.method, path });
    const verified = header ? await verifier.verifyAuthorization(header, proofOf) : undefined;
    if (verified === undefined) return refused(401, 'invalid_token', 'no access token provided', 'Bearer');
    if (!verified.ok) return refused(401, 'invalid_token', 'invalid token provided', challengeFor(verified));
    const caller = verified.caller;
    if (!caller.scope.includes('openid')) {
      return refused(403, 'insufficient_scope', 'access token missing openid scope', 'Bearer error="insufficient_scope", scope="openid"');
    }
    const account = await findAccount(db, caller.subject);
    if (!account) return refused(401, 'invalid_token', 'invalid token provided', 'Bearer error="invalid_token"');
    const clientId = caller.clientId ?? undefined;
    return { status: 200, body: releasedClaims(caller, await account.claims()), ...(clientId ? { clientId } : {}) };
  }

  // Before the provider's own handling: `ctx.oidc` does not exist yet here.
  return async function userinfo(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
    if (ctx.path !== path || (ctx.method !== 'GET' && ctx.method !== 'POST')) return next();
    let result: Answer;
    try {
      result = await answer(ctx);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      result = { status: 503, body: { error: 'temporarily_unavailable', error_description: 'try again shortly' } };
      ctx.set('retry-after', String(RETRY_AFTER_SECONDS));
    }
    await allowOrigin(ctx, provider, result.clientId);
    ctx.status = result.status;
    ctx.set('cache-control', 'no-store');
    if (result.challenge) ctx.set('www-authenticate', result.challenge);
    ctx.body = result.body;
  };
}

/** `sub`, and the claims of each OpenID scope the token carries. */
function releasedClaims(caller: SignedInCaller, claims: Record<string, unknown>): Record<string, unknown> {
  const released: Record<string, unknown> = { sub: caller.subject };
  for (const scope of caller.scope) {
    for (const claim of CLAIMS_OF_SCOPE[scope] ?? []) if (claims[claim] !== undefined) released[claim] = claims[claim];
  }
  return released;
}

/** A browser's call is readable by the page only from an origin of one of the token's client's redirect URIs. */
async function allowOrigin(ctx: KoaContextWithOIDC, provider: Provider, clientId: string | undefined): Promise<void> {
  const origin = ctx.get('origin');
  if (!origin) return;
  ctx.vary('origin');
  if (!clientId) return;
  const client = await provider.Client.find(clientId);
  if (!client?.redirectUris?.some((uri) => originOf(uri) === origin)) return;
  ctx.set('access-control-allow-origin', origin);
  ctx.set('access-control-expose-headers', 'WWW-Authenticate');
}

function originOf(uri: string): string | undefined {
  try {
    return new URL(uri).origin;
  } catch {
    return undefined;
  }
}
