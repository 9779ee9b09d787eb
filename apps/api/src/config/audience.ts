/**
 * The audience access tokens were issued for before the API's resource identifier became PUBLIC_URL. Accepted
 * beside it while API_AUDIENCE is left unset, so tokens issued before a deploy keep working until they expire and
 * refresh tokens granted for it still refresh (into tokens for the new audience).
 */
export const LEGACY_API_AUDIENCE = 'urn:latchkey:api';

/**
 * The API's audience (RFC 8707 resource indicator, RFC 9728 resource identifier): API_AUDIENCE, or PUBLIC_URL.
 * `acceptedAudiences` is what the verifier takes: the audience, and the legacy one when API_AUDIENCE is unset.
 */
export function apiAudienceConfig(configured: string | undefined, publicUrl: string) {
  const audience = configured ?? publicUrl;
  const acceptedAudiences = configured === undefined && audience !== LEGACY_API_AUDIENCE ? [audience, LEGACY_API_AUDIENCE] : [audience];
  return { audience, acceptedAudiences, resourceIdentifier: publicUrl };
}
