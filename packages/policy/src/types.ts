/** `null`, `undefined` and `false` all mean "no signed-in user" (spec Authentication 2). */
export type Guest = null | undefined | false;

/**
 * Runs before every non-binding ability of a policy: `true` allows, `false` denies, anything else
 * defers to the ability (spec Authorization 8).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a hook with no opinion may simply not return
export type BeforeHook<User> = (user: User | null, ability: string, args: readonly unknown[]) => boolean | undefined | void;

/** An ability's check: allows only when it returns the boolean `true` (spec Authorization 8). */
export type Check<User, Args extends unknown[]> = (user: User | null, ...args: Args) => unknown;

/** A named ability: a singleton that takes per-request state as arguments (spec Authorization 9). */
export interface Ability<User, Args extends unknown[]> {
  readonly policy: string;
  readonly name: string;
  /** binding abilities bind everyone: the `before` hook cannot override them */
  readonly binding: boolean;
  readonly check: Check<User, Args>;
  readonly before: BeforeHook<User> | undefined;
  /** the scope a caller's token must hold for the ability to allow, whatever else is true; undefined: none */
  readonly scope: string | undefined;
}

/**
 * A caller's scopes as the decisions read them: `scopes` is the set its access token holds, or null / absent for a
 * caller scopes do not restrict (an operator acting through the CLI). What the caller may do is its rights AND these.
 */
export interface ScopedUser {
  readonly scopes?: ReadonlySet<string> | null;
}

export type DenialReason = 'unauthenticated' | 'forbidden';

/** The event published for every denial by `authorize` (spec Events 2). */
export interface DenialEvent<User = unknown> {
  type: 'denied';
  policy: string;
  ability: string;
  reason: DenialReason;
  user: User | null;
  args: readonly unknown[];
  handler: string;
}
