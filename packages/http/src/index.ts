// `@latchkey/http`: what the API's routes and the authorization server's pages share to speak HTTP: one
// responder, request bodies within limits (a refused one discarded within a bound), media types, the client's
// address behind trusted proxies, the rate-limit decisions of the sign-in routes, the declarative route table, and
// the one way a request's state is kept (requestMemo).
export { BodyTooLargeError, readBody } from './read-body.js';
export { BODY_DISCARD_BOUND, discardBody, isDiscardingBody, type DiscardBound } from './discard-body.js';
export { FormError, readFields, readJsonObject } from './fields.js';
export { acceptable, acceptableContentType } from './media-types.js';
export { createClientAddresses, type ClientAddresses, type TrustProxy } from './client-address.js';
export { USER_AGENT_LENGTH, userAgentOf } from './user-agent.js';
export {
  createLimitGate,
  type Attempt,
  type AttemptLimits,
  type ErrorLog,
  type LimitDecision,
  type LimitGate,
  type LimitGateOptions,
  type TooMany,
} from './rate-limit.js';
export { refuse, wantsJson } from './refusal.js';
export { requestMemo, type RequestMemo } from './request-memo.js';
export {
  formTargetOf,
  httpErrorBody,
  pagePolicy,
  seeOther,
  sendGraphQLRequestError,
  sendHtml,
  sendHttpError,
  sendJson,
  sendServiceUnavailable,
} from './respond.js';
export { createRouteTable, type Method, type Route, type RouteMatch, type RouteTable } from './route-table.js';
