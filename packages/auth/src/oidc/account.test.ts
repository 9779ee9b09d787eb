import { eq, findAnyUserIdByEmail, users } from '@latchkey/db';
import { describe, expect, it } from 'vitest';
import { findAccount, findActiveUserIdByEmail } from '../index.js';
import { database, useOwnDatabase } from '../test-support/own-database.js';
import { insertUser, randomEmail } from '../test-support/users.js';

useOwnDatabase('account');

// Two look-ups of an account by e-mail address: a caller who took the database's for a sign-in would let a
// suspended account in. Their names say which answers what.
describe('an account looked up by e-mail address', () => {
  it('active: both look-ups answer its id', async () => {
    const email = randomEmail();
    const userId = await insertUser(database.db, email);
    expect(await findActiveUserIdByEmail(database.db, email)).toBe(userId);
    expect(await findAnyUserIdByEmail(database.db, email)).toBe(userId);
  });

  it('suspended: findActiveUserIdByEmail answers null, findAnyUserIdByEmail still its id', async () => {
    const email = randomEmail();
    const userId = await insertUser(database.db, email);
    await database.db.update(users).set({ suspended: true }).where(eq(users.id, userId));
    expect(await findActiveUserIdByEmail(database.db, email)).toBeNull();
    expect(await findAnyUserIdByEmail(database.db, email)).toBe(userId);
    // The provider's account look-up agrees with the sign-in's.
    expect(await findAccount(database.db, userId)).toBeUndefined();
  });

  it('unknown: both answer null', async () => {
    const email = randomEmail();
    expect(await findActiveUserIdByEmail(database.db, email)).toBeNull();
    expect(await findAnyUserIdByEmail(database.db, email)).toBeNull();
  });
});
