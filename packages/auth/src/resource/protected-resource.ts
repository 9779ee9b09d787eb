import { DPOP_ALGORITHMS } from '../principal/dpop-proof.js';
import { API_SCOPE_NAMES, EVERY_API_SCOPE } from '../scopes/vocabulary.js';

/** Where RFC 9728 puts a resource's metadata: the well-known segment between the identifier's host and its path. */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

export interface ProtectedResource {
  /** the metadata's path on this server (the well-known segment, then the identifier's own path) */
  path: string;
  /** the metadata's absolute URL, as `resource_metadata` in a 401's challenge names it */
  url: string;
  /** the metadata document (RFC 9728 §2), as JSON */
  body: string;
}

/**
 * The API as an OAuth protected resource (RFC 9728): its identifier (PUBLIC_URL: the audience clients ask a token
 * for with RFC 8707's `resource`), the authorization server that protects it, the scopes it understands and how a
 * token is presented (the Authorization header only, Bearer or DPoP-bound).
 */
export function describeProtectedResource(options: { resourceIdentifier: string; issuer: string; name: string }): ProtectedResource {
  const identifier = new URL(options.resourceIdentifier);
  const ownPath = identifier.pathname === '/' ? '' : identifier.pathname.replace(/\/+$/, '');
  const path = `${PROTECTED_RESOURCE_WELL_KNOWN}${ownPath}`;
  const metadata = {
    resource: options.resourceIdentifier,
    authorization_servers: [options.issuer],
    scopes_supported: [EVERY_API_SCOPE, ...API_SCOPE_NAMES],
    bearer_methods_supported: ['header'],
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    resource_name: options.name,
  };
  return { path, url: `${identifier.origin}${path}`, body: JSON.stringify(metadata) };
}

/**
 * A challenge that asks for a token (none, a refused one, a step-up) with `resource_metadata` (RFC 9728 §5.1): a
 * client that knows nothing of the API learns where its metadata is, and from there which authorization server to
 * ask. A missing scope's challenge (403) is left as it is: that caller has found its authorization server already.
 */
export function withResourceMetadata(challenge: string, metadataUrl: string): string {
  if (challenge.includes('error="insufficient_scope"')) return challenge;
  const parameter = `resource_metadata="${metadataUrl}"`;
  // A bare scheme ("Bearer") takes its first parameter after a space, the others after a comma.
  return /^\S+$/.test(challenge.trim()) ? `${challenge.trim()} ${parameter}` : `${challenge}, ${parameter}`;
}
