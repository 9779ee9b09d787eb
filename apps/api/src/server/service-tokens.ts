import type { ServiceTokenPolicy } from '@latchkey/auth';
import { findOrganizationBySlug, type Database } from '@latchkey/db';
import type { Logger } from 'pino';
import type { ServiceRegistration } from '../config/services.js';

/**
 * What the token endpoint checks of a service's request (client credentials), from its registration: the scopes it
 * may ask for, and that its organization exists now. A refusal's reason is logged; the client is told only
 * `invalid_client`.
 */
export function serviceTokenPolicy(services: readonly ServiceRegistration[], db: Database, logger: Logger): ServiceTokenPolicy {
  const byClientId = new Map(services.map((service) => [service.clientId, service]));
  return {
    scopesOf: (clientId) => byClientId.get(clientId)?.scopes,
    async refusal(clientId) {
      const { organization } = byClientId.get(clientId)!;
      return (await findOrganizationBySlug(db, organization)) ? undefined : `its organization "${organization}" does not exist`;
    },
    onRefused: (clientId, reason) => logger.warn({ clientId, reason }, `no token for service "${clientId}": ${reason}`),
  };
}
