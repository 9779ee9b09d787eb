import { hash } from '@node-rs/argon2';
import { eq, passwordCredentials, users } from '@latchkey/db';
import { countStatements } from '@latchkey/db/testing';
import { describe, expect, it } from 'vitest';
// The module's own index (the package index re-exports it as it is).
import {
  checkPasswordPolicy,
  hasPassword,
  PASSWORD_ERRORS,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  PasswordError,
  removePassword,
  setPassword,
  verifyPassword,
  type PasswordErrorCode,
} from './index.js';
import { database, useOwnDatabase } from '../test-support/own-database.js';
import { insertUser, randomEmail } from '../test-support/users.js';

useOwnDatabase('password');

const PHC = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/;
const GOOD = 'correct horse battery staple';

async function newUser(): Promise<{ userId: string; email: string }> {
  const email = randomEmail();
  return { userId: await insertUser(database.db, email), email };
}

async function storedRows(userId: string) {
  return database.db.select().from(passwordCredentials).where(eq(passwordCredentials.userId, userId));
}

async function refusal(promise: Promise<unknown>): Promise<PasswordErrorCode> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(PasswordError);
    expect((error as PasswordError).message).toBe(PASSWORD_ERRORS[(error as PasswordError).code]);
    return (error as PasswordError).code;
  }
  throw new Error('expected a PasswordError');
}

describe('setPassword', () => {
  it('stores an argon2id PHC string with the OWASP minimum parameters, never the password', async () => {
    const { userId, email } = await newUser();
    expect(await hasPassword(database.db, userId)).toBe(false);
    await setPassword(database.db, { userId, email, password: GOOD });

    const rows = await storedRows(userId);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.passwordHash).toMatch(PHC);
    expect(rows[0]!.passwordHash).not.toContain(GOOD);
    expect(rows[0]!.passwordHash).not.toContain(Buffer.from(GOOD).toString('base64').slice(0, 16));
    expect(Math.abs(rows[0]!.updatedAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(await hasPassword(database.db, userId)).toBe(true);
  });

  it('salts: the same password for two accounts gives two different hashes', async () => {
    const a = await newUser();
    const b = await newUser();
    await setPassword(database.db, { ...a, password: GOOD });
    await setPassword(database.db, { ...b, password: GOOD });
    const [rowA] = await storedRows(a.userId);
    const [rowB] = await storedRows(b.userId);
    expect(rowA!.passwordHash).not.toBe(rowB!.passwordHash);
  });

  it.each([
    ['11 characters', () => 'abcdefghijk', 'PASSWORD_TOO_WEAK'],
    ['only whitespace', () => ' \t\n'.repeat(5), 'PASSWORD_TOO_WEAK'],
    ['only Unicode whitespace', () => '\u3000\u00a0\u2003'.repeat(5), 'PASSWORD_TOO_WEAK'],
    ['the e-mail address', (email: string) => email, 'PASSWORD_TOO_WEAK'],
    ['the e-mail address in capitals, padded', (email: string) => `  ${email.toUpperCase()} `, 'PASSWORD_TOO_WEAK'],
    ['257 characters', () => 'a'.repeat(257), 'PASSWORD_TOO_LONG'],
    ['11 emoji (22 UTF-16 units)', () => '🔑'.repeat(11), 'PASSWORD_TOO_WEAK'],
  ] as const)('refuses %s and stores nothing', async (_label, password, code) => {
    const { userId, email } = await newUser();
    expect(await refusal(setPassword(database.db, { userId, email, password: password(email) }))).toBe(code);
    expect(await storedRows(userId)).toEqual([]);
    expect(await hasPassword(database.db, userId)).toBe(false);
  });

  it('a refused new password leaves the current one in place', async () => {
    const { userId, email } = await newUser();
    await setPassword(database.db, { userId, email, password: GOOD });
    const [before] = await storedRows(userId);
    expect(await refusal(setPassword(database.db, { userId, email, password: 'short' }))).toBe('PASSWORD_TOO_WEAK');
    expect(await storedRows(userId)).toEqual([before]);
    expect(await verifyPassword(database.db, { userId, password: GOOD })).toBe(true);
  });

  it('accepts exactly 12 and exactly 256 characters', async () => {
    const { userId, email } = await newUser();
    await setPassword(database.db, { userId, email, password: 'x'.repeat(PASSWORD_MIN_LENGTH) });
    expect(await verifyPassword(database.db, { userId, password: 'x'.repeat(12) })).toBe(true);
    await setPassword(database.db, { userId, email, password: 'y'.repeat(PASSWORD_MAX_LENGTH) });
    expect(await verifyPassword(database.db, { userId, password: 'y'.repeat(256) })).toBe(true);
    expect(await verifyPassword(database.db, { userId, password: 'y'.repeat(257) })).toBe(false);
  });

  it('setting again replaces the password: one row, the old one no longer works', async () => {
    const { userId, email } = await newUser();
    await setPassword(database.db, { userId, email, password: GOOD });
    await database.db
      .update(passwordCredentials)
      .set({ updatedAt: new Date('2020-01-01T00:00:00Z') })
      .where(eq(passwordCredentials.userId, userId));
    await setPassword(database.db, { userId, email, password: 'a completely different one' });

    const rows = await storedRows(userId);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.updatedAt.getTime()).toBeGreaterThan(new Date('2020-01-02T00:00:00Z').getTime());
    expect(await verifyPassword(database.db, { userId, password: GOOD })).toBe(false);
    expect(await verifyPassword(database.db, { userId, password: 'a completely different one' })).toBe(true);
  });

  it('goes with its account', async () => {
    const { userId, email } = await newUser();
    await setPassword(database.db, { userId, email, password: GOOD });
    await database.db.delete(users).where(eq(users.id, userId));
    expect(await storedRows(userId)).toEqual([]);
  });
});

describe('verifyPassword', () => {
  it("is true for the right password, false for a wrong one, another account's, or a near miss", async () => {
    const alice = await newUser();
    const bob = await newUser();
    await setPassword(database.db, { ...alice, password: GOOD });
    await setPassword(database.db, { ...bob, password: 'bob has his own passphrase' });

    expect(await verifyPassword(database.db, { userId: alice.userId, password: GOOD })).toBe(true);
    expect(await verifyPassword(database.db, { userId: alice.userId, password: 'wrong password here' })).toBe(false);
    expect(await verifyPassword(database.db, { userId: alice.userId, password: 'bob has his own passphrase' })).toBe(false);
    expect(await verifyPassword(database.db, { userId: bob.userId, password: GOOD })).toBe(false);
    expect(await verifyPassword(database.db, { userId: alice.userId, password: `${GOOD} ` })).toBe(false);
    expect(await verifyPassword(database.db, { userId: alice.userId, password: GOOD.toUpperCase() })).toBe(false);
    expect(await verifyPassword(database.db, { userId: alice.userId, password: '' })).toBe(false);
  });

  it('is false for an account without a password, and for no account at all', async () => {
    const { userId } = await newUser();
    expect(await verifyPassword(database.db, { userId, password: GOOD })).toBe(false);
    expect(await verifyPassword(database.db, { userId, password: GOOD })).toBe(false); // the dummy hash, reused
    expect(await verifyPassword(database.db, { userId: '00000000-0000-4000-8000-000000000000', password: GOOD })).toBe(false);
  });

  it('refuses over-long input before touching the database or hashing', async () => {
    const { userId, email } = await newUser();
    await setPassword(database.db, { userId, email, password: GOOD });
    const huge = 'a'.repeat(1_000_000);
    const started = performance.now();
    let result: boolean | undefined;
    expect(await countStatements(async () => (result = await verifyPassword(database.db, { userId, password: huge })))).toBe(0);
    expect(result).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await countStatements(async () => (result = await verifyPassword(database.db, { userId, password: '🔑'.repeat(257) })))).toBe(0);
    expect(result).toBe(false);
  });

  it('takes Unicode passwords: emoji count as one character each; precomposed and combining forms are the same (NFKC)', async () => {
    const { userId, email } = await newUser();
    const emoji = '🔑🦄👩‍👩‍👧 pässwörd';
    await setPassword(database.db, { userId, email, password: emoji });
    expect(await verifyPassword(database.db, { userId, password: emoji })).toBe(true);
    expect(await verifyPassword(database.db, { userId, password: '🔑🦄👩‍👩‍👧 passwort' })).toBe(false);

    await setPassword(database.db, { userId, email, password: '🔑'.repeat(12) });
    expect(await verifyPassword(database.db, { userId, password: '🔑'.repeat(12) })).toBe(true);

    const combining = 'cafe\u0301 cre\u0300me bru\u0302le\u0301e';
    const precomposed = 'caf\u00e9 cr\u00e8me br\u00fbl\u00e9e';
    expect(combining).not.toBe(precomposed);
    await setPassword(database.db, { userId, email, password: combining });
    expect(await verifyPassword(database.db, { userId, password: precomposed })).toBe(true);
    expect(await verifyPassword(database.db, { userId, password: combining })).toBe(true);
    expect(await verifyPassword(database.db, { userId, password: 'cafe creme brulee' })).toBe(false);
  });

  it('replaces a hash with weaker parameters on a successful check, and only then', async () => {
    const { userId } = await newUser();
    const weak = await hash(GOOD, { memoryCost: 8192, timeCost: 1, parallelism: 1 });
    expect(weak).toMatch(/^\$argon2id\$v=19\$m=8192,t=1,p=1\$/);
    const setAt = new Date('2021-06-01T00:00:00Z');
    await database.db.insert(passwordCredentials).values({ userId, passwordHash: weak, updatedAt: setAt });

    expect(await verifyPassword(database.db, { userId, password: 'not the password' })).toBe(false);
    expect((await storedRows(userId))[0]!.passwordHash).toBe(weak);

    expect(await verifyPassword(database.db, { userId, password: GOOD })).toBe(true);
    const [row] = await storedRows(userId);
    expect(row!.passwordHash).toMatch(PHC);
    expect(row!.updatedAt).toEqual(setAt); // the password itself did not change
    expect(await verifyPassword(database.db, { userId, password: GOOD })).toBe(true);

    // current parameters: a successful check writes nothing
    expect(await countStatements(() => verifyPassword(database.db, { userId, password: GOOD }))).toBe(1);
  });
});

describe('removePassword', () => {
  it('removes the password; false when there was none', async () => {
    const { userId, email } = await newUser();
    expect(await removePassword(database.db, userId)).toBe(false);
    await setPassword(database.db, { userId, email, password: GOOD });
    expect(await removePassword(database.db, userId)).toBe(true);
    expect(await hasPassword(database.db, userId)).toBe(false);
    expect(await verifyPassword(database.db, { userId, password: GOOD })).toBe(false);
    expect(await removePassword(database.db, userId)).toBe(false);
  });

  it("leaves other accounts' passwords alone", async () => {
    const a = await newUser();
    const b = await newUser();
    await setPassword(database.db, { ...a, password: GOOD });
    await setPassword(database.db, { ...b, password: GOOD });
    await removePassword(database.db, a.userId);
    expect(await verifyPassword(database.db, { userId: b.userId, password: GOOD })).toBe(true);
  });
});

describe('checkPasswordPolicy', () => {
  it('returns the refusal code, or null for an acceptable password', () => {
    expect(checkPasswordPolicy(GOOD, 'a@acme.test')).toBeNull();
    expect(checkPasswordPolicy('short', 'a@acme.test')).toBe('PASSWORD_TOO_WEAK');
    expect(checkPasswordPolicy('long-address@acme.test', 'Long-Address@ACME.test')).toBe('PASSWORD_TOO_WEAK');
    expect(checkPasswordPolicy('z'.repeat(300), 'a@acme.test')).toBe('PASSWORD_TOO_LONG');
    // six e + combining acute are 12 code points as typed but 6 after NFKC
    expect(checkPasswordPolicy('e\u0301'.repeat(6), 'a@acme.test')).toBe('PASSWORD_TOO_WEAK');
  });
});
