// The scopes of Latchkey's API: one declared vocabulary, each scope with what it allows in the words the consent page
// shows. What a token may do is its caller's rights and its scopes: every GraphQL field (`@scope` in schema/) and REST
// route (the route table) that needs one names it, and the policies check it with the caller's other attributes.

/** One scope of the API: its name, and what it allows, in plain words (shown on consent). */
export interface ApiScope {
  readonly name: string;
  readonly description: string;
}

/** The API's scopes, as discovery lists them and the consent page describes them. */
export const API_SCOPE_VOCABULARY = [
  { name: 'documents:read', description: 'Read the documents you can see, with their authors and organizations.' },
  { name: 'documents:write', description: 'Create, edit, publish, archive and delete documents, as far as your role allows.' },
  { name: 'organizations:read', description: 'See the organizations you belong to: their names and plans.' },
  { name: 'organizations:manage', description: "Change members' roles in the organizations you administer." },
  { name: 'account:read', description: 'See your account: your name, e-mail address, memberships and passkeys.' },
  { name: 'account:manage', description: 'Rename or remove your passkeys, and disconnect the apps you allowed.' },
  { name: 'sessions:manage', description: 'See where you are signed in, and sign out of those sessions.' },
] as const satisfies readonly ApiScope[];

export type ApiScopeName = (typeof API_SCOPE_VOCABULARY)[number]['name'];

/** Every API scope's name, in the vocabulary's order. */
export const API_SCOPE_NAMES: readonly ApiScopeName[] = API_SCOPE_VOCABULARY.map((scope) => scope.name);

/**
 * The scope first-party apps asked for before the API's scopes were split: a token that carries it has every API
 * scope. Only first-party clients are granted it.
 */
export const EVERY_API_SCOPE = 'api';

/** The OpenID scopes: they add claims to a token and restrict nothing in the API. */
export const OPENID_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;

const NAMES: ReadonlySet<string> = new Set(API_SCOPE_NAMES);

export const isApiScope = (name: string): name is ApiScopeName => NAMES.has(name);

/** What the scopes of a token allow in the API: its API scopes, every one of them for `api`. */
export function apiScopesOf(tokenScopes: readonly string[]): ReadonlySet<ApiScopeName> {
  if (tokenScopes.includes(EVERY_API_SCOPE)) return new Set(API_SCOPE_NAMES);
  return new Set(tokenScopes.filter(isApiScope));
}

/** What a scope allows, in plain words; undefined for a scope outside the vocabulary. */
export const describeScope = (name: string): string | undefined => API_SCOPE_VOCABULARY.find((scope) => scope.name === name)?.description;
