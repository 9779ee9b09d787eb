// Services in OIDC_CLIENTS: clients registered with `grant_types: ["client_credentials"]`, which call the API for
// themselves. Each is bound to one organization (`organization`, its slug) with a role below OWNER (`role`, VIEWER
// when absent), and to the API scopes it may ask for (the standard `scope` metadata).

import {
  CLIENT_CREDENTIALS,
  isRedirectless,
  isService,
  isServiceScope,
  SERVICE_AUTH_METHODS,
  SERVICE_SCOPES,
} from '@latchkey/auth/configuration';
import { ConfigError } from './error.js';
import type { OidcClient, ServiceRegistration, ServiceRole } from './types.js';

/** The roles a service may hold in its organization: every one below OWNER. */
export const SERVICE_ROLES = ['ADMIN', 'EDITOR', 'VIEWER'] as const satisfies readonly ServiceRole[];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** A client registered without redirect URIs gets none and no response type (its grants send no browser back). */
export function withRedirectlessDefaults(client: OidcClient): OidcClient {
  if (!isRedirectless(client.grant_types)) return client;
  return { ...client, redirect_uris: client.redirect_uris ?? [], response_types: client.response_types ?? [] };
}

/** What is wrong with one service's registration; empty when nothing is. */
function problemsOf(client: OidcClient): string[] {
  const problems: string[] = [];
  if (client.grant_types!.length !== 1) problems.push(`grant_types: a service has "${CLIENT_CREDENTIALS}" alone`);
  if (UUID.test(client.client_id))
    problems.push("client_id: a service's id is its token's subject, so it must not look like an account id (a UUID)");
  if (client.first_party) problems.push('first_party: a service acts for no person, so it is neither first- nor third-party');
  const method = client.token_endpoint_auth_method ?? 'client_secret_basic';
  if (!(SERVICE_AUTH_METHODS as readonly string[]).includes(method)) {
    problems.push(`token_endpoint_auth_method: a service authenticates with ${SERVICE_AUTH_METHODS.join(', ')} (not "${method}")`);
  }
  const { organization, role, scope } = client;
  if (typeof organization !== 'string' || !SLUG.test(organization)) {
    problems.push('organization: the slug of the organization the service belongs to');
  }
  if (role === 'OWNER') problems.push('role: a service cannot be OWNER (one of ADMIN, EDITOR, VIEWER)');
  else if (role !== undefined && !(SERVICE_ROLES as readonly unknown[]).includes(role)) {
    problems.push(`role: one of ${SERVICE_ROLES.join(', ')} (VIEWER when absent)`);
  }
  if (typeof scope !== 'string' || scope.trim() === '') {
    problems.push(`scope: the API scopes the service may ask for, among ${SERVICE_SCOPES.join(' ')}`);
  } else {
    const outside = scope.split(' ').filter((name) => name !== '' && !isServiceScope(name));
    if (outside.length > 0) {
      problems.push(`scope: ${outside.join(' ')} is not for a service (a service may ask for ${SERVICE_SCOPES.join(' ')})`);
    }
  }
  return problems;
}

/**
 * The services among the clients, their registrations checked: a start-up error names each client at fault and
 * what is wrong (a role of OWNER, a scope about a person's own account, a public client...).
 */
export function serviceRegistrations(clients: readonly OidcClient[]): ServiceRegistration[] {
  const lines: string[] = [];
  const services: ServiceRegistration[] = [];
  clients.forEach((client, index) => {
    if (!isService(client)) return;
    const problems = problemsOf(client);
    for (const problem of problems) lines.push(`  OIDC_CLIENTS.${index} (service "${client.client_id}"): ${problem}`);
    if (problems.length > 0) return;
    services.push({
      clientId: client.client_id,
      organization: client['organization'] as string,
      role: (client['role'] as ServiceRole | undefined) ?? 'VIEWER',
      scopes: [...new Set((client['scope'] as string).split(' ').filter(Boolean))],
    });
  });
  if (lines.length > 0) throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  return services;
}
