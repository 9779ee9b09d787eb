import { CLIENT_CREDENTIALS } from '@latchkey/auth/configuration';
import { ConfigError } from './error.js';
import type { OidcClient } from './types.js';

// Which registered clients are third-party apps, and what a third-party registration may not claim.

/**
 * A client that can get tokens for people (any grant type but a service's; none named means the offered ones) and is
 * not `first_party` is a third-party app: it gets the consent page and appears in its users' Connected apps. One
 * registered with `grant_types: []` (a resource server that only introspects) is neither first- nor third-party, and
 * a service (`client_credentials` alone) acts for nobody: no one consents for it.
 */
export const isThirdParty = (client: OidcClient) =>
  !client.first_party && (client.grant_types === undefined || client.grant_types.some((grant) => grant !== CLIENT_CREDENTIALS));

/** The metadata a third-party app shows on the consent page: https (or http) URLs only, as oidc-provider requires. */
const SHOWN_URIS = ['logo_uri', 'client_uri', 'policy_uri', 'tos_uri'] as const;

/**
 * Refuses at start-up what a third-party registration may not claim: `resource_server` (introspecting every
 * user's tokens is for the deployment's own back-ends), a non-string `client_name`, or a shown URI that is not an
 * http(s) URL. Each problem names the client.
 */
export function checkThirdPartyClients(clients: readonly OidcClient[]): void {
  const problems: string[] = [];
  clients.forEach((client, index) => {
    if (!isThirdParty(client)) return;
    const at = `  OIDC_CLIENTS.${index} ("${client.client_id}")`;
    if (client.resource_server) {
      problems.push(
        `${at}: a third-party app (no "first_party": true) cannot be a resource_server; register the back-end with "grant_types": []`,
      );
    }
    if (client['client_name'] !== undefined && typeof client['client_name'] !== 'string')
      problems.push(`${at}.client_name: must be a string`);
    for (const key of SHOWN_URIS) {
      const value = client[key];
      if (value === undefined) continue;
      if (typeof value !== 'string' || !/^https?:\/\/[^\s]+$/.test(value) || !URL.canParse(value))
        problems.push(`${at}.${key}: must be an http(s) URL`);
    }
  });
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n${problems.join('\n')}`);
}
