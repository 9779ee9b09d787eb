/**
 * The `WWW-Authenticate` challenge of a token that lacks a scope (RFC 6750 §3.1): `insufficient_scope`, with `scope`
 * naming every scope the request needs, so a client knows what to ask for. The Bearer scheme, as the step-up
 * challenge's: the error is the token's scope, whichever way the token is presented.
 */
export function insufficientScopeChallenge(required: readonly string[]): string {
  return `Bearer error="insufficient_scope", error_description="${insufficientScopeMessage(required)}", scope="${required.join(' ')}"`;
}

/** What the refusal says, for people: the scopes a request needs (they name no record and reveal nothing). */
export function insufficientScopeMessage(required: readonly string[]): string {
  return `The access token does not carry the scope this request needs (${required.join(', ')}).`;
}
