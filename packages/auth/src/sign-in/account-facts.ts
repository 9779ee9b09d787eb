import { eq, memberships, users, type Database } from '@latchkey/db';
import type { AccountFacts } from '../factors/types.js';

/** What the multi-factor rules are decided on, read now (roles change; never cached across requests). */
export async function accountFactsOf(db: Database, userId: string): Promise<AccountFacts | null> {
  const [user] = await db
    .select({ email: users.email, superAdmin: users.superAdmin, suspended: users.suspended })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  if (!user || user.suspended) return null;
  const roles = await db.select({ role: memberships.role }).from(memberships).where(eq(memberships.userId, userId));
  return { email: user.email, superAdmin: user.superAdmin, roles: [...new Set(roles.map((row) => row.role))] };
}
