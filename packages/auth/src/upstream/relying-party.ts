import type * as OpenIdClient from 'openid-client';
import { UpstreamError } from './errors.js';
import { UPSTREAM_REQUEST_TTL_SECONDS, type PendingUpstreamRequest, type UpstreamPurpose } from './pending-request.js';

export interface UpstreamProviderOptions {
  /** the upstream provider's issuer identifier (its metadata is discovered from it); https, or http on loopback */
  issuer: string;
  clientId: string;
  /** sent with HTTP Basic authentication (client_secret_basic) */
  clientSecret: string;
  /** where the upstream provider sends the browser back (registered with the upstream provider) */
  redirectUri: string;
  /** @default 'openid email' */
  scope?: string;
  /** per request to the upstream provider. @default 10 */
  timeoutSeconds?: number;
}

/** Who signed in at the upstream provider: the verified ID token's issuer and subject (and e-mail, for show). */
export interface UpstreamIdentity {
  issuer: string;
  subject: string;
  /** as the upstream provider claims it: never used to find or link an account */
  email?: string;
}

/** openid-client, loaded on the first upstream sign-in: about 7 MB of resident memory a deployment without upstream providers never needs. */
const openIdClient = () => import('openid-client');

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether plain http may be used with this issuer: only on the loopback interface (development and tests),
 * where no network lies between the two servers.
 */
export function isLoopbackHttpIssuer(issuer: URL): boolean {
  return issuer.protocol === 'http:' && LOOPBACK_HOSTS.has(issuer.hostname);
}

/** Whether `issuer` may be configured: an absolute https URL (http on loopback) without query or fragment. */
export function isAcceptableIssuer(issuer: string): boolean {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return false;
  }
  return (
    (url.protocol === 'https:' || isLoopbackHttpIssuer(url)) &&
    url.search === '' &&
    url.hash === '' &&
    url.username === '' &&
    url.password === ''
  );
}

/**
 * The relying-party side of signing in through an upstream OpenID provider (authorization code flow with
 * PKCE, `state` and `nonce`), with openid-client. The provider's metadata is discovered on first use and kept;
 * a failed discovery is retried on the next use.
 */
export function createUpstreamRelyingParty(options: UpstreamProviderOptions) {
  if (!isAcceptableIssuer(options.issuer))
    throw new TypeError('issuer must be an https URL (http only on localhost or 127.0.0.1), without query or fragment');
  const issuer = new URL(options.issuer);
  const redirectUri = new URL(options.redirectUri);
  const scope = options.scope ?? 'openid email';
  const timeout = options.timeoutSeconds ?? 10;
  let configuration: Promise<OpenIdClient.Configuration> | undefined;

  function discover(): Promise<OpenIdClient.Configuration> {
    configuration ??= openIdClient()
      .then((client) =>
        client.discovery(
          issuer,
          options.clientId,
          { client_secret: options.clientSecret },
          client.ClientSecretBasic(options.clientSecret),
          {
            // Plain http only where isAcceptableIssuer allowed it: the loopback interface.
            execute: isLoopbackHttpIssuer(issuer) ? [client.allowInsecureRequests] : [],
            timeout,
          },
        ),
      )
      .catch((error: unknown) => {
        configuration = undefined;
        throw new UpstreamError('UPSTREAM_UNAVAILABLE', { cause: error });
      });
    return configuration;
  }

  /**
   * A new authorization request: where to send the browser, and what the browser must keep (sealed) until the
   * callback. `userId` is the account asking for a link.
   */
  async function start(
    purpose: UpstreamPurpose,
    userId?: string,
    now = Date.now(),
  ): Promise<{ url: string; request: PendingUpstreamRequest }> {
    if (purpose === 'link' && !userId) throw new TypeError('a link needs the account that asks for it');
    const [client, config] = await Promise.all([openIdClient(), discover()]);
    const request: PendingUpstreamRequest = {
      purpose,
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
      ...(purpose === 'link' ? { userId } : {}),
      expiresAt: Math.floor(now / 1000) + UPSTREAM_REQUEST_TTL_SECONDS,
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri.href,
      response_type: 'code',
      scope,
      state: request.state,
      nonce: request.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(request.codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, request };
  }

  /**
   * The callback: `query` is the callback's query string. Checks it against this browser's `request` (state),
   * redeems the code (PKCE) and verifies the ID token (signature, issuer, audience, nonce, times). Throws an
   * UpstreamError: UPSTREAM_DENIED (the provider sent an error), UPSTREAM_INVALID_RESPONSE (wrong state, a code
   * used already or expired, a bad ID token) or UPSTREAM_UNAVAILABLE.
   */
  async function finish(query: string, request: PendingUpstreamRequest): Promise<UpstreamIdentity> {
    const [client, config] = await Promise.all([openIdClient(), discover()]);
    // The callback URL as registered (never the Host header), with the parameters the provider sent.
    const currentUrl = new URL(redirectUri.href);
    currentUrl.search = query;
    let tokens: Awaited<ReturnType<typeof OpenIdClient.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, currentUrl, {
        expectedState: request.state,
        expectedNonce: request.nonce,
        pkceCodeVerifier: request.codeVerifier,
        idTokenExpected: true,
      });
    } catch (error) {
      throw classify(error, client);
    }
    const claims = tokens.claims();
    if (!claims || typeof claims.sub !== 'string' || typeof claims.iss !== 'string') throw new UpstreamError('UPSTREAM_INVALID_RESPONSE');
    return { issuer: claims.iss, subject: claims.sub, ...(typeof claims['email'] === 'string' ? { email: claims['email'] } : {}) };
  }

  return { issuer: options.issuer, start, finish };
}

export type UpstreamRelyingParty = ReturnType<typeof createUpstreamRelyingParty>;

/** Which refusal an openid-client failure is. */
function classify(error: unknown, client: typeof OpenIdClient): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (error instanceof client.AuthorizationResponseError)
    return new UpstreamError('UPSTREAM_DENIED', { upstreamError: error.error, cause: error });
  if (error instanceof client.ResponseBodyError) {
    // invalid_grant and the like: a code used already, expired, or not this client's.
    return error.status >= 500
      ? new UpstreamError('UPSTREAM_UNAVAILABLE', { upstreamError: error.error, cause: error })
      : new UpstreamError('UPSTREAM_INVALID_RESPONSE', { upstreamError: error.error, cause: error });
  }
  if (error instanceof client.ClientError) {
    // An unexpected status or body from the token endpoint is the provider's failure; every other check
    // (state, iss, the ID token's claims, signature and times) failed on what the browser brought.
    const providerFailure = error.code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || error.code === 'OAUTH_RESPONSE_IS_NOT_JSON';
    return new UpstreamError(providerFailure ? 'UPSTREAM_UNAVAILABLE' : 'UPSTREAM_INVALID_RESPONSE', { cause: error });
  }
  // Network failures and timeouts.
  return new UpstreamError('UPSTREAM_UNAVAILABLE', { cause: error });
}
