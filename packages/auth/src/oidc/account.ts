import { users, type Database } from '@latchkey/db';
import { eq } from '@latchkey/db';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The OpenID account of a user id, read when the provider needs it (never cached across requests). */
export async function findAccount(db: Database, accountId: string) {
  if (!UUID.test(accountId)) return undefined;
  const [user] = await db.select().from(users).where(eq(users.id, accountId)).limit(1);
  if (!user || user.suspended) return undefined;
  return {
    accountId: user.id,
    async claims() {
      return { sub: user.id, email: user.email, email_verified: user.emailVerified, name: user.displayName ?? undefined };
    },
  };
}

/**
 * The id of the active account for a username (a lower-cased e-mail), or null for an unknown address or a suspended
 * account: what a sign-in asks. Unknown addresses never create accounts. (@latchkey/db's `findAnyUserIdByEmail`
 * answers a suspended account's id too.)
 */
export async function findActiveUserIdByEmail(db: Database, email: string): Promise<string | null> {
  const [user] = await db.select({ id: users.id, suspended: users.suspended }).from(users).where(eq(users.email, email)).limit(1);
  return user && !user.suspended ? user.id : null;
}
