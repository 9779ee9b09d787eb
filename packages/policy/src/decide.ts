import { AuthorizationDenied } from './denial.js';
import { publishDenial } from './events.js';
import type { Ability, Guest, ScopedUser } from './types.js';

function isGuest(subject: unknown): subject is Guest {
  return subject === null || subject === undefined || subject === false;
}

/** Whether a caller's token holds `scope` (a caller scopes do not restrict holds every one). */
function holdsScope(subject: unknown, scope: string): boolean {
  const scopes = (subject as ScopedUser | null)?.scopes;
  return scopes == null || scopes.has(scope);
}

function decide<User, Args extends unknown[]>(given: User | Guest, ability: Ability<User, Args>, args: Args): boolean {
  const subject = isGuest(given) ? null : given;
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
export function can<User, Args extends unknown[]>(subject: User | Guest, ability: Ability<User, Args>, ...args: Args): boolean {
  try {
    return decide(subject, ability, args);
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
  subject: User | Guest,
  ability: Ability<User, Args>,
  args: Args,
  options: AuthorizeOptions = {},
): void {
  if (decide(subject, ability, args)) return;
  const guest = isGuest(subject);
  const reason = guest ? 'unauthenticated' : 'forbidden';
  publishDenial({
    type: 'denied',
    policy: ability.policy,
    ability: ability.name,
    reason,
    user: guest ? null : subject,
    args,
    handler: options.handler ?? 'unknown',
  });
  throw new AuthorizationDenied(reason, ability.policy, ability.name);
}
