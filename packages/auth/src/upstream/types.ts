/** The upstream OpenID provider a deployment signs people in through (UPSTREAM_ISSUER and its client here). */
export interface UpstreamConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** what the sign-in button calls the provider */
  name: string;
}
