import type { SignInFactor } from '../web/factor-module.js';

/**
 * Signing in through the upstream OpenID provider (UPSTREAM_ISSUER): RFC 8176 has no method for it, so it is
 * reported as `fed` (federated), as other providers do.
 */
export const upstreamFactor: SignInFactor = {
  authority: 'AUTHORIZATION_CODE',
  amr: 'fed',
  label: 'your organization’s sign-in',
  offeredWhen: (settings) => settings.upstream,
  web: async () => (await import('./web.js')).createUpstreamWeb,
};
