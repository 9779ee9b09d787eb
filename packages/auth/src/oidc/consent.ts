import { findConnectedAppGrant, recordConnectedAppUse, type Database } from '@latchkey/db';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { API_SCOPE_NAMES, EVERY_API_SCOPE, OPENID_SCOPES } from '../scopes/vocabulary.js';

// Third-party apps: what they may ask for, the grant remembered per user and client, and when each was last used.
// The consent page itself is packages/auth/src/web/consent.ts.

/** The scopes a third-party app may ask for: OpenID's and the API's own, never `api` (first-party apps only). */
const THIRD_PARTY_SCOPES: ReadonlySet<string> = new Set<string>([...OPENID_SCOPES, ...API_SCOPE_NAMES]);
/** Every scope the provider knows: a request naming another is refused (`invalid_scope`), not silently narrowed. */
const KNOWN_SCOPES: ReadonlySet<string> = new Set<string>([...THIRD_PARTY_SCOPES, EVERY_API_SCOPE]);

type InteractionPolicy = typeof import('oidc-provider').interactionPolicy;
type Prompts = ReturnType<InteractionPolicy['base']>;

/**
 * Adds the scope rules to the first prompt (whose checks run on every authorization request, signed in or not): an
 * unknown scope is `invalid_scope`, and so is `api` asked by a third-party client. oidc-provider alone ignores
 * scopes it does not know.
 */
export function checkRequestedScopes(
  prompts: Prompts,
  policy: InteractionPolicy,
  errors: typeof import('oidc-provider').errors,
  firstParty: ReadonlySet<string>,
): Prompts {
  prompts.get('login')!.checks.add(
    new policy.Check('latchkey_scopes', 'the requested scopes are known', (ctx) => {
      const requested = String(ctx.oidc.params?.['scope'] ?? '')
        .split(' ')
        .filter(Boolean);
      const allowed = firstParty.has(ctx.oidc.client!.clientId) ? KNOWN_SCOPES : THIRD_PARTY_SCOPES;
      const refused = requested.find((scope) => !allowed.has(scope));
      if (refused !== undefined) {
        const why = KNOWN_SCOPES.has(refused) ? 'is for first-party applications only' : 'is not a scope of this server';
        throw new errors.InvalidScope(`${refused} ${why}`, refused);
      }
      return policy.Check.NO_NEED_TO_PROMPT;
    }),
  );
  return prompts;
}

/**
 * The grant a person gave a third-party app in an earlier session (the Connected apps list), so a new sign-in does
 * not ask again for what was allowed; undefined when there is none (or it was revoked).
 */
export async function rememberedGrant(ctx: KoaContextWithOIDC, db: Database) {
  const accountId = ctx.oidc.session?.accountId;
  const clientId = ctx.oidc.client?.clientId;
  if (!accountId || !clientId) return undefined;
  const grantId = await findConnectedAppGrant(db, accountId, clientId);
  if (!grantId) return undefined;
  const grant = await ctx.oidc.provider.Grant.find(grantId);
  return grant && grant.accountId === accountId && grant.clientId === clientId ? grant : undefined;
}

/**
 * Keeps each connected app's "last used" up to date: a code or refresh token exchanged for tokens under its grant.
 * Recording never fails the provider's request: an error is only reported.
 */
export function watchConnectedAppUse(
  provider: Provider,
  db: Database,
  firstParty: ReadonlySet<string>,
  onError: (error: unknown) => void,
): void {
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    const clientId = ctx.oidc.client?.clientId;
    if (!clientId || firstParty.has(clientId)) return;
    const { RefreshToken, AuthorizationCode, DeviceCode } = ctx.oidc.entities;
    const grantId = (RefreshToken ?? AuthorizationCode ?? DeviceCode)?.grantId;
    if (typeof grantId === 'string') recordConnectedAppUse(db, grantId).catch(onError);
  });
}
