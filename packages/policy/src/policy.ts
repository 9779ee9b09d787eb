import type { Ability, BeforeHook, Check } from './types.js';

/** An ability as written in a policy: a check, or a check marked binding. */
export type AbilityDefinition<User> = Check<User, any[]> | { readonly check: Check<User, any[]>; readonly binding: true };

type ArgsOf<Definition> = Definition extends (user: any, ...args: infer A) => unknown
  ? A
  : Definition extends { check: (user: any, ...args: infer A) => unknown }
    ? A
    : never;

type UserOf<Definition> = Definition extends (user: infer U, ...args: any[]) => unknown
  ? Exclude<U, null>
  : Definition extends { check: (user: infer U, ...args: any[]) => unknown }
    ? Exclude<U, null>
    : never;

export type Policy<Definitions extends Record<string, AbilityDefinition<any>>> = {
  readonly name: string;
} & { readonly [K in keyof Definitions]: Ability<UserOf<Definitions[K]>, ArgsOf<Definitions[K]>> };

/** Marks an ability as binding: the `before` hook is not consulted (e.g. legal hold vs. super-admin). */
export function binding<User, Args extends unknown[]>(
  check: Check<User, Args>,
): { readonly check: Check<User, Args>; readonly binding: true } {
  return Object.freeze({ check, binding: true as const });
}

/**
 * Groups the abilities of one resource under a name. Every ability becomes a frozen singleton
 * (`DocumentPolicy.delete`) that knows its policy, so denials can be reported by name. `scopes` names the scope a
 * caller's token must hold for an ability (checked before anything else, binding abilities and the before hook
 * included): a scope never adds a right, it only narrows the caller's.
 */
export function definePolicy<const Definitions extends Record<string, AbilityDefinition<any>>>(
  name: string,
  spec: { before?: BeforeHook<any>; scopes?: { readonly [Ability in keyof Definitions]?: string }; abilities: Definitions },
): Policy<Definitions> {
  const policy: Record<string, unknown> = { name };
  for (const [abilityName, definition] of Object.entries(spec.abilities)) {
    if (abilityName === 'name') throw new TypeError(`${name}: an ability cannot be called "name"`);
    const check = typeof definition === 'function' ? definition : definition.check;
    const isBinding = typeof definition !== 'function' && definition.binding === true;
    const scope = spec.scopes?.[abilityName as keyof Definitions];
    policy[abilityName] = Object.freeze({ policy: name, name: abilityName, binding: isBinding, check, before: spec.before, scope });
  }
  return Object.freeze(policy) as Policy<Definitions>;
}
