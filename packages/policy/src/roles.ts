/**
 * A role hierarchy where a role grants itself and every role below it (spec Authorization 7).
 * Roles are listed highest first, e.g. `createRoleHierarchy(['OWNER', 'ADMIN', 'EDITOR', 'VIEWER'])`.
 */
export function createRoleHierarchy<const Role extends string>(highestFirst: readonly Role[]) {
  const rank = new Map<string, number>(highestFirst.map((role, index) => [role, highestFirst.length - index]));
  if (rank.size !== highestFirst.length) throw new TypeError('role hierarchy: roles must be distinct');
  return {
    roles: highestFirst,
    /** true when `held` is `required` or above it; unknown or missing roles grant nothing */
    grants(held: Role | string | null | undefined, required: Role): boolean {
      const have = held == null ? undefined : rank.get(held);
      const need = rank.get(required);
      return have !== undefined && need !== undefined && have >= need;
    },
    /** true when `role` is one of the hierarchy's roles */
    isRole(role: unknown): role is Role {
      return typeof role === 'string' && rank.has(role);
    },
  };
}

export type RoleHierarchy<Role extends string> = ReturnType<typeof createRoleHierarchy<Role>>;
