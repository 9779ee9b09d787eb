// What the authorization server offers, as data configuration can check without loading the provider.

/** The only response type offered (authorization code with PKCE, RFC 9700); OIDC_CLIENTS may ask for no other. */
export const OFFERED_RESPONSE_TYPES = ['code'] as const;
/** The grant types that go with it: the code itself and refresh-token rotation. */
export const OFFERED_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
/** The device grant (RFC 8628): offered to a client that registers it (a CLI, a TV), never by default. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
/** The client credentials grant: a service's own (services.ts), never by default. */
export const CLIENT_CREDENTIALS = 'client_credentials';
/** Every grant type a registration may name. */
export const REGISTRABLE_GRANT_TYPES = [...OFFERED_GRANT_TYPES, DEVICE_CODE_GRANT_TYPE, CLIENT_CREDENTIALS] as const;

/**
 * Whether a registration's grants send nobody's browser back to the client, so it needs no redirect URI: a service's
 * (client credentials), a device's (the device grant, with refresh tokens or not), or none at all (a back-end that
 * only introspects). Any registration with the authorization code needs one.
 */
export const isRedirectless = (grantTypes: readonly string[] | undefined): boolean =>
  grantTypes !== undefined && !grantTypes.includes('authorization_code');
