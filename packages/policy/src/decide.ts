import { AuthorizationDenied } from './denial.js';
import { publishDenial } from './events.js';
import type { Ability, Guest, ScopedUser } from './types.js';

function isGuest(user: unknown): user is Guest {
  return user === null || user === undefined || user === false;
}

/** Whether a caller's token holds `scope` (a caller scopes do not restrict holds every one). */
function holdsScope(user: unknown, scope: string): boolean {
  const scopes = (user as ScopedUser | null)?.scopes;
  return scopes == null || scopes.has(scope);
}

function decide<User, Args extends unknown[]>(user: User | Guest, ability: Ability<User, Args>, args: Args): boolean {
  const subject = isGuest(user) ? null : user;
  // The token's scopes narrow whatever the caller may do: before the before hook (a super-admin's token too).
  if (ability.scope !== undefined && !holdsScope(subject, ability.scope)) return false;
  if (!ability.binding && ability.before) {
    const verdict = ability.before(subject, ability.name, args);
    if (verdict === true) return true;
    if (verdict === false) return false;
  }
  // Only the boolean true allows: a truthy object, 1 or a promise deny (spec Authorization 8).
  return ability.check(subject, ...args) === true;
}

/**
 * Answers yes or no and never throws; publishes nothing (spec Authorization 10, Events 2). Use it to tell
 * clients what they may do (`viewerCan`), so the interface and the endpoints cannot disagree.
 */
export function can<User, Args extends unknown[]>(user: User | Guest, ability: Ability<User, Args>, ...args: Args): boolean {
  try {
    return decide(user, ability, args);
  } catch {
    return false;
  }
}

export interface AuthorizeOptions {
  /** the handler that asked, reported in the denial event (e.g. "DocumentService.delete") */
  handler?: string;
}

/**
 * Throws AuthorizationDenied unless the ability allows: `unauthenticated` (401) for a guest, since signing
 * in might change the answer, `forbidden` (403) for a known user (spec Authorization 4-5). Every denial is
 * published on the denial stream and diagnostics channel.
 */
export function authorize<User, Args extends unknown[]>(
  user: User | Guest,
  ability: Ability<User, Args>,
  args: Args,
  options: AuthorizeOptions = {},
): void {
  if (decide(user, ability, args)) return;
  const guest = isGuest(user);
  const reason = guest ? 'unauthenticated' : 'forbidden';
  publishDenial({
    type: 'denied',
    policy: ability.policy,
    ability: ability.name,
    reason,
    user: guest ? null : user,
    args,
    handler: options.handler ?? 'unknown',
  });
  throw new AuthorizationDenied(reason, ability.policy, ability.name);
}
