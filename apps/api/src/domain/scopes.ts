import { apiScopesOf } from '@latchkey/auth/tokens';

/** What the scope rule reads of a caller: its token's scopes and client (absent: no token, the operator's CLI). */
export interface ScopedCaller {
  readonly scope?: readonly string[];
  readonly clientId?: string | null;
}

/** A caller's granted API scopes; null for a caller scopes do not restrict. */
export type GrantedScopes = (caller: ScopedCaller | null) => ReadonlySet<string> | null;

/**
 * The API scopes a caller's token holds, which narrow whatever its caller may do: the API scopes it names (`api`:
 * every one). A first-party app's token that names none (one that asked only for OpenID scopes, as every sign-in did
 * before the API's scopes existed) holds every one, as it always did. Null for a caller without a token (an operator
 * acting as a user through the CLI), whom scopes do not restrict. One set per token's scope list, made once.
 */
export function createGrantedScopes(firstPartyClientIds: readonly string[] = []): GrantedScopes {
  const firstParty = new Set(firstPartyClientIds);
  const named = new WeakMap<readonly string[], ReadonlySet<string>>();
  const every = apiScopesOf(['api']);
  return (caller) => {
    const scope = caller?.scope;
    if (scope === undefined) return null;
    let scopes = named.get(scope);
    if (!scopes) named.set(scope, (scopes = apiScopesOf(scope)));
    return scopes.size === 0 && caller?.clientId != null && firstParty.has(caller.clientId) ? every : scopes;
  };
}

const keys = new WeakMap<ReadonlySet<string>, string>();

/** A stable text for a set of granted scopes (`*` for a caller they do not restrict), made once per set. */
export function scopesKey(scopes: ReadonlySet<string> | null): string {
  if (scopes === null) return '*';
  let key = keys.get(scopes);
  if (key === undefined) keys.set(scopes, (key = [...scopes].sort().join(' ')));
  return key;
}
