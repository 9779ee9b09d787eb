import { DEVICE_CODE_GRANT_TYPE, isRedirectless, OFFERED_RESPONSE_TYPES, REGISTRABLE_GRANT_TYPES } from '@latchkey/auth/configuration';
import { z } from 'zod';
import { ConfigError } from './error.js';
import type { Config, OidcClient } from './types.js';
import { serviceRegistrations, withRedirectlessDefaults } from './services.js';

const oidcClients = z.array(
  z
    .object({
      client_id: z.string().min(1).max(100),
      client_secret: z.string().min(32).optional(),
      redirect_uris: z.array(z.url()).optional(),
      post_logout_redirect_uris: z.array(z.url()).optional(),
      // Back-channel logout (OpenID Connect Back-Channel Logout 1.0): told when a session it was used in ends.
      backchannel_logout_uri: z.url().optional(),
      backchannel_logout_session_required: z.boolean().optional(),
      // Authorization code with PKCE (RFC 9700), the device grant (RFC 8628) and client credentials to a service
      // (services.ts): asking for anything else stops start-up.
      grant_types: z
        .array(
          z.enum(REGISTRABLE_GRANT_TYPES, { error: `only ${REGISTRABLE_GRANT_TYPES.map((type) => `"${type}"`).join(', ')} are offered` }),
        )
        .optional(),
      response_types: z
        .array(
          z.enum(OFFERED_RESPONSE_TYPES, {
            error: `only ${OFFERED_RESPONSE_TYPES.map((type) => `"${type}"`).join(', ')} is offered (authorization code with PKCE)`,
          }),
        )
        .optional(),
      token_endpoint_auth_method: z.string().optional(),
      first_party: z.boolean().optional(),
      resource_server: z.boolean().optional(),
    })
    .loose()
    // Only a client whose grants send no browser back to it (a service's, the device grant, or none: a back-end that
    // introspects) may have no redirect URI.
    .refine((client) => (client.redirect_uris?.length ?? 0) > 0 || isRedirectless(client.grant_types), {
      path: ['redirect_uris'],
      message:
        'at least one redirect URI (a client that only introspects tokens has "grant_types": [] and "response_types": []; a service has "grant_types": ["client_credentials"])',
    }),
);

export const DEMO_CLIENT_ID = 'latchkey-demo';
/** The command line's own client (`pnpm latchkey login`): first-party, public, the device grant. */
export const CLI_CLIENT_ID = 'latchkey-cli';

export function parseClients(raw: string | undefined): OidcClient[] {
  if (!raw) return [];
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ConfigError('invalid configuration:\n  OIDC_CLIENTS: not valid JSON (a JSON array of client metadata)');
  }
  const result = oidcClients.safeParse(json);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  OIDC_CLIENTS.${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return (result.data as OidcClient[]).map(withRedirectlessDefaults);
}

export function authConfig(
  configured: OidcClient[],
  demo: boolean,
  publicUrl: string,
  cli = true,
): Omit<
  Config['auth'],
  | 'smtpUrl'
  | 'factors'
  | 'mailFrom'
  | 'webhook'
  | 'selfSignup'
  | 'bindLinksToBrowser'
  | 'privateNetworkFetch'
  | 'passwords'
  | 'relyingParty'
  | 'signInPolicy'
  | 'clientCertificates'
  | 'upstream'
> {
  const clients = [...configured];
  if (demo && !clients.some((client) => client.client_id === DEMO_CLIENT_ID)) {
    // A public client (no secret, PKCE) for the demo page served at PUBLIC_URL.
    clients.push({
      client_id: DEMO_CLIENT_ID,
      redirect_uris: [`${publicUrl}/callback`],
      post_logout_redirect_uris: [`${publicUrl}/`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      first_party: true,
    });
  }
  if (cli && !clients.some((client) => client.client_id === CLI_CLIENT_ID)) clients.push(cliClient());
  return {
    clients,
    firstPartyClientIds: clients.filter((client) => client.first_party).map((client) => client.client_id),
    resourceServerClientIds: clients.filter((client) => client.resource_server).map((client) => client.client_id),
    services: serviceRegistrations(clients),
    demoClientId: demo ? DEMO_CLIENT_ID : undefined,
  };
}

/**
 * The command line's client (OIDC_CLI_CLIENT, on by default): public (it keeps no secret), the device grant and
 * refresh-token rotation, no redirect URI; first-party, so its tokens hold every API scope of the person.
 */
function cliClient(): OidcClient {
  return {
    client_id: CLI_CLIENT_ID,
    client_name: 'Latchkey command line',
    redirect_uris: [],
    grant_types: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
    response_types: [],
    token_endpoint_auth_method: 'none',
    first_party: true,
  };
}
