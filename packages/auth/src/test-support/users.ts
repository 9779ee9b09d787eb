import { randomBytes } from 'node:crypto';
import { users, type Database } from '@latchkey/db';

/** An e-mail address no other test uses, so the accounts of one test never meet another's. */
export const randomEmail = () => `u-${randomBytes(6).toString('hex')}@acme.test`;

/** Inserts an account (at a random address unless `email` is given) and returns its id. */
export async function insertUser(db: Database, email = randomEmail()): Promise<string> {
  const [row] = await db.insert(users).values({ email }).returning({ id: users.id });
  return row!.id;
}
