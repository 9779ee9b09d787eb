import type { Role } from '@latchkey/db';

/**
 * The caller as the policies see it: volatile attributes read from the database at decision time
 * (role, suspension, verified e-mail), never trusted from token claims (spec Authentication 3).
 */
export interface Subject {
  id: string;
  superAdmin: boolean;
  suspended: boolean;
  emailVerified: boolean;
  /** organization id -> role */
  roles: ReadonlyMap<string, Role>;
}
