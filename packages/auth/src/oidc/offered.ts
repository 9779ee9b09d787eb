// What the authorization server offers, as data configuration can check without loading the provider.

/** The only response type offered (authorization code with PKCE, RFC 9700); OIDC_CLIENTS may ask for no other. */
export const OFFERED_RESPONSE_TYPES = ['code'] as const;
/** The grant types that go with it: the code itself and refresh-token rotation. */
export const OFFERED_GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
