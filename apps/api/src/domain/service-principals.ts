import type { ServiceRegistration } from '../config/types.js';

/**
 * Services as callers: a token issued by the client credentials grant has its client's id as `sub` and as
 * `client_id`, and that client is registered as a service (config/services.ts). No user token looks like that: a
 * service's client has no grant that signs a person in, and a user's `sub` is an account id (a UUID), which no
 * service's client id may be.
 */
export interface ServicePrincipals {
  /** The registration of the service that is calling, or undefined when the caller is a person (or a guest). */
  registrationOf(caller: { subject: string; clientId?: string | null } | null): ServiceRegistration | undefined;
}

/** How a service is named wherever a person would be by account id (the audit trail's actor, its budget's key). */
export const serviceActor = (clientId: string) => `client:${clientId}`;

export function createServicePrincipals(registrations: readonly ServiceRegistration[]): ServicePrincipals {
  const byClientId = new Map(registrations.map((registration) => [registration.clientId, registration]));
  return {
    registrationOf(caller) {
      if (!caller?.clientId || caller.subject !== caller.clientId) return undefined;
      return byClientId.get(caller.clientId);
    },
  };
}

/** No service is registered (the CLI's callers, tests of the domain). */
export const NO_SERVICE_PRINCIPALS: ServicePrincipals = { registrationOf: () => undefined };
