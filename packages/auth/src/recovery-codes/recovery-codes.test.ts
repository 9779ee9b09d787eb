import { eq, recoveryCodes } from '@latchkey/db';
import { countStatements } from '@latchkey/db/testing';
import { describe, expect, it } from 'vitest';
import { consumeRecoveryCode, countRecoveryCodes, generateRecoveryCodes, RECOVERY_CODE_ALPHABET } from '../index.js';
import { database, useOwnDatabase } from '../test-support/own-database.js';
import { insertUser } from '../test-support/users.js';

useOwnDatabase('recovery');

const CODE_SHAPE = /^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$/;

const newUser = () => insertUser(database.db);

describe('recovery codes', () => {
  it('ten unique codes of 60 random bits, unambiguous, stored as hashes only', async () => {
    expect(RECOVERY_CODE_ALPHABET).toHaveLength(32);
    expect(RECOVERY_CODE_ALPHABET).not.toMatch(/[ilou]/);
    const userId = await newUser();
    const codes = await generateRecoveryCodes(database.db, userId);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(CODE_SHAPE);
    expect(await countRecoveryCodes(database.db, userId)).toBe(10);
    const rows = await database.db.select().from(recoveryCodes).where(eq(recoveryCodes.userId, userId));
    expect(rows).toHaveLength(10);
    const stored = JSON.stringify(rows);
    for (const code of codes) {
      expect(stored).not.toContain(code);
      expect(stored).not.toContain(code.replace(/-/g, ''));
    }
    for (const row of rows) expect(row.codeHash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await generateRecoveryCodes(database.db, userId, { count: 3 })).toHaveLength(3);
    for (const count of [0, -1, 1.5, 101]) await expect(generateRecoveryCodes(database.db, userId, { count })).rejects.toThrow(RangeError);
    expect(await countRecoveryCodes(database.db, userId)).toBe(3);
  });

  it('each code works once; typing variants are accepted', async () => {
    const userId = await newUser();
    const codes = await generateRecoveryCodes(database.db, userId);
    const variants = [
      (code: string) => code,
      (code: string) => code.toUpperCase(),
      (code: string) => code.replace(/-/g, ''),
      (code: string) => ` ${code.replace(/-/g, ' ')} `,
      (code: string) => code.replace(/0/g, 'O').replace(/1/g, 'l'),
    ];
    for (const [index, code] of codes.entries()) {
      expect(await consumeRecoveryCode(database.db, userId, variants[index % variants.length]!(code))).toBe(true);
      expect(await consumeRecoveryCode(database.db, userId, code)).toBe(false);
      expect(await countRecoveryCodes(database.db, userId)).toBe(codes.length - index - 1);
    }
  });

  it('of 10 concurrent consumptions of one code exactly one succeeds', async () => {
    const userId = await newUser();
    const [code] = await generateRecoveryCodes(database.db, userId);
    const results = await Promise.all(Array.from({ length: 10 }, () => consumeRecoveryCode(database.db, userId, code!)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await countRecoveryCodes(database.db, userId)).toBe(9);
  });

  it('regenerating invalidates all earlier codes', async () => {
    const userId = await newUser();
    const old = await generateRecoveryCodes(database.db, userId);
    const fresh = await generateRecoveryCodes(database.db, userId);
    expect(fresh.filter((code) => old.includes(code))).toEqual([]);
    for (const code of old) expect(await consumeRecoveryCode(database.db, userId, code)).toBe(false);
    expect(await countRecoveryCodes(database.db, userId)).toBe(10);
    expect(await consumeRecoveryCode(database.db, userId, fresh[0]!)).toBe(true);
  });

  it('malformed input is refused without a query', async () => {
    const userId = await newUser();
    const [code] = await generateRecoveryCodes(database.db, userId);
    for (const malformed of ['', 'x', `${code}a`, code!.slice(0, -1), 'uuuu-uuuu-uuuu', "' or 1=1 --", 'a'.repeat(1000), null, 42]) {
      let result: boolean | undefined;
      expect(
        await countStatements(async () => {
          result = await consumeRecoveryCode(database.db, userId, malformed as string);
        }),
      ).toBe(0);
      expect(result).toBe(false);
    }
    expect(await countRecoveryCodes(database.db, userId)).toBe(10);
  });

  it("another account's code is refused, and stays usable for its owner", async () => {
    const alice = await newUser();
    const bob = await newUser();
    const [aliceCode] = await generateRecoveryCodes(database.db, alice);
    await generateRecoveryCodes(database.db, bob);
    expect(await consumeRecoveryCode(database.db, bob, aliceCode!)).toBe(false);
    expect(await countRecoveryCodes(database.db, bob)).toBe(10);
    expect(await consumeRecoveryCode(database.db, alice, aliceCode!)).toBe(true);
    expect(await countRecoveryCodes(database.db, await newUser())).toBe(0);
  });
});
