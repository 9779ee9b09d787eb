import type { AuditTrail, Provider, ServiceTokenPolicy } from '@latchkey/auth';
import { findOrganizationBySlug, type Database } from '@latchkey/db';
import type { Logger } from 'pino';
import type { ServiceRegistration } from '../config/types.js';
import { serviceActor } from '../domain/service-principals.js';

/**
 * What the token endpoint checks of a service's request (client credentials), from its registration: the scopes it
 * may ask for, and that its organization exists now. A refusal's reason is logged and audited; the client is told
 * only `invalid_client`.
 */
export function serviceTokenPolicy(
  services: readonly ServiceRegistration[],
  db: Database,
  logger: Logger,
  audit: AuditTrail,
): ServiceTokenPolicy {
  const byClientId = new Map(services.map((service) => [service.clientId, service]));
  return {
    scopesOf: (clientId) => byClientId.get(clientId)?.scopes,
    async refusal(clientId) {
      const { organization } = byClientId.get(clientId)!;
      return (await findOrganizationBySlug(db, organization)) ? undefined : `its organization "${organization}" does not exist`;
    },
    onRefused(clientId, reason, request) {
      logger.warn({ clientId, reason }, `no token for service "${clientId}": ${reason}`);
      audit.record({ type: 'service.token_refused', details: { clientId, reason }, actor: serviceActor(clientId), request });
    },
  };
}

/** Each token given to a service is in the audit trail (`service.token_issued`), as a person's sign-in is. */
export function auditServiceTokens(provider: Provider, audit: AuditTrail): void {
  provider.on('grant.success', (ctx) => {
    const token = ctx.oidc.entities.ClientCredentials;
    if (!token) return;
    const clientId = ctx.oidc.client!.clientId;
    audit.record({
      type: 'service.token_issued',
      details: { clientId, scope: token.scope ?? '', dpop: token.jkt !== undefined },
      actor: serviceActor(clientId),
      request: ctx.req,
    });
  });
}
