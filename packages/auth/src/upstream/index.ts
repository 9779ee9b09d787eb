export { UPSTREAM_ERRORS, UpstreamError } from './errors.js';
export type { UpstreamErrorCode } from './errors.js';
export {
  findLinkedUser,
  isFederatedIdentityShaped,
  linkFederatedIdentity,
  listFederatedIdentities,
  unlinkFederatedIdentity,
} from './identities.js';
export type { FederatedIdentity, LinkedIdentitySummary } from './identities.js';
export { deriveUpstreamRequestKey, openUpstreamRequest, sealUpstreamRequest, UPSTREAM_REQUEST_TTL_SECONDS } from './pending-request.js';
export type { PendingUpstreamRequest, UpstreamPurpose } from './pending-request.js';
export { createUpstreamRelyingParty, isAcceptableIssuer, isLoopbackHttpIssuer } from './relying-party.js';
export type { UpstreamIdentity, UpstreamProviderOptions, UpstreamRelyingParty } from './relying-party.js';
export type { UpstreamConfig } from './types.js';
