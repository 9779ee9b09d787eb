import { randomUUID } from 'node:crypto';
import { eq, totpCredentials } from '@latchkey/db';
import { generate } from 'otplib';
import { countStatements } from '@latchkey/db/testing';
import { describe, expect, it } from 'vitest';
import {
  confirmTotpEnrolment,
  deriveTotpKey,
  hasConfirmedTotp,
  removeTotp,
  startTotpEnrolment,
  TOTP_ERRORS,
  TotpError,
  verifyTotp,
  type TotpErrorCode,
} from '../index.js';
import { openTotpSecret, sealTotpSecret } from './secret-box.js';
import { database, useOwnDatabase } from '../test-support/own-database.js';
import { insertUser } from '../test-support/users.js';

useOwnDatabase('totp');

const key = deriveTotpKey('test signing key material');
const otherKey = deriveTotpKey('another signing key');
// A step boundary (1_800_000_000 / 30 = 60_000_000), and "now" 10 seconds into that step.
const STEP_START = 1_800_000_000;
const now = new Date((STEP_START + 10) * 1000);
const codeAt = (secret: string, stepOffset: number) => generate({ secret, epoch: STEP_START + stepOffset * 30 });

const newUser = () => insertUser(database.db);

/** A user with an authenticator app confirmed ten minutes before `now`, so steps near `now` are unused. */
async function enrolledUser(): Promise<{ userId: string; secret: string }> {
  const userId = await newUser();
  const { secret } = await startTotpEnrolment(database.db, key, { userId, accountName: 'someone@acme.test', issuer: 'Latchkey' });
  await confirmTotpEnrolment(database.db, key, { userId, code: await codeAt(secret, -20), now: new Date((STEP_START - 600) * 1000) });
  return { userId, secret };
}

async function refusal(promise: Promise<unknown>): Promise<TotpErrorCode> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TotpError);
    expect((error as TotpError).message).toBe(TOTP_ERRORS[(error as TotpError).code]);
    return (error as TotpError).code;
  }
  throw new Error('expected a TotpError');
}

describe('TOTP enrolment', () => {
  it('returns a 160-bit base32 secret, its otpauth URI and a QR code; stores the secret only encrypted', async () => {
    const userId = await newUser();
    const enrolment = await startTotpEnrolment(database.db, key, { userId, accountName: 'alice@acme.test', issuer: 'Latchkey' });
    expect(enrolment.secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(enrolment.otpauthUri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.searchParams.get('secret')).toBe(enrolment.secret);
    expect(uri.searchParams.get('issuer')).toBe('Latchkey');
    expect(decodeURIComponent(uri.pathname)).toContain('alice@acme.test');
    expect(enrolment.qrSvg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(enrolment.qrSvg).not.toContain(enrolment.secret);

    const [row] = await database.db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId));
    expect(row!.confirmedAt).toBeNull();
    expect(row!.lastUsedStep).toBeNull();
    expect(JSON.stringify(row)).not.toContain(enrolment.secret);
    expect(JSON.stringify(row)).not.toContain(enrolment.secret.toLowerCase());
    expect(Buffer.from(row!.secretCiphertext, 'base64url')).toHaveLength(12 + 16 + 32);
    expect(openTotpSecret(key, userId, row!.secretCiphertext)).toBe(enrolment.secret);
    expect(() => openTotpSecret(otherKey, userId, row!.secretCiphertext)).toThrow(TOTP_ERRORS.TOTP_SECRET_UNREADABLE);
    // Bound to the account: the same ciphertext on another account's row does not decrypt.
    expect(() => openTotpSecret(key, randomUUID(), row!.secretCiphertext)).toThrow(TOTP_ERRORS.TOTP_SECRET_UNREADABLE);
  });

  it('derives a stable 32-byte key per server secret; refuses keys of another size', () => {
    expect(deriveTotpKey('test signing key material')).toEqual(key);
    expect(key).toHaveLength(32);
    expect(otherKey).not.toEqual(key);
    expect(() => sealTotpSecret(new Uint8Array(16), randomUUID(), 'JBSWY3DPEHPK3PXP')).toThrow(TypeError);
  });

  it('an unconfirmed credential does not verify, and does not count as enrolled', async () => {
    const userId = await newUser();
    const { secret } = await startTotpEnrolment(database.db, key, { userId, accountName: 'a@acme.test', issuer: 'Latchkey' });
    expect(await hasConfirmedTotp(database.db, userId)).toBe(false);
    expect(await refusal(verifyTotp(database.db, key, { userId, code: await codeAt(secret, 0), now }))).toBe('TOTP_NOT_ENROLLED');
  });

  it('confirmation: wrong and malformed codes are refused; the right one confirms and is used up', async () => {
    const userId = await newUser();
    expect(await refusal(confirmTotpEnrolment(database.db, key, { userId, code: '123456', now }))).toBe('TOTP_NOT_ENROLLED');
    const { secret } = await startTotpEnrolment(database.db, key, { userId, accountName: 'a@acme.test', issuer: 'Latchkey' });
    const right = await codeAt(secret, 0);
    const wrong = right === '000000' ? '000001' : '000000';
    expect(await refusal(confirmTotpEnrolment(database.db, key, { userId, code: wrong, now }))).toBe('TOTP_CODE_INVALID');
    expect(await refusal(confirmTotpEnrolment(database.db, key, { userId, code: await codeAt(secret, 2), now }))).toBe('TOTP_CODE_INVALID');
    expect(await refusal(confirmTotpEnrolment(database.db, key, { userId, code: 'abc', now }))).toBe('TOTP_CODE_INVALID');
    expect(await hasConfirmedTotp(database.db, userId)).toBe(false);

    await confirmTotpEnrolment(database.db, key, { userId, code: right, now });
    expect(await hasConfirmedTotp(database.db, userId)).toBe(true);
    const [row] = await database.db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId));
    expect(row!.confirmedAt).toEqual(now);
    expect(row!.lastUsedStep).toBe(STEP_START / 30);
    // The confirming code cannot sign anybody in.
    expect(await refusal(verifyTotp(database.db, key, { userId, code: right, now }))).toBe('TOTP_CODE_REPLAYED');
    expect(await refusal(confirmTotpEnrolment(database.db, key, { userId, code: right, now }))).toBe('TOTP_ALREADY_ENROLLED');
    // The next code does.
    await verifyTotp(database.db, key, { userId, code: await codeAt(secret, 1), now });
  });

  it('restarting a pending enrolment replaces its secret; a confirmed one is kept until removed', async () => {
    const userId = await newUser();
    const first = await startTotpEnrolment(database.db, key, { userId, accountName: 'a@acme.test', issuer: 'Latchkey' });
    const second = await startTotpEnrolment(database.db, key, { userId, accountName: 'a@acme.test', issuer: 'Latchkey' });
    expect(second.secret).not.toBe(first.secret);
    const firstCode = await codeAt(first.secret, 0);
    if (firstCode !== (await codeAt(second.secret, 0))) {
      expect(await refusal(confirmTotpEnrolment(database.db, key, { userId, code: firstCode, now }))).toBe('TOTP_CODE_INVALID');
    }
    await confirmTotpEnrolment(database.db, key, { userId, code: await codeAt(second.secret, 0), now });

    const [before] = await database.db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId));
    expect(await refusal(startTotpEnrolment(database.db, key, { userId, accountName: 'a@acme.test', issuer: 'Latchkey' }))).toBe(
      'TOTP_ALREADY_ENROLLED',
    );
    const [after] = await database.db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId));
    expect(after).toEqual(before);

    expect(await removeTotp(database.db, userId)).toBe(true);
    expect(await removeTotp(database.db, userId)).toBe(false);
    expect(await hasConfirmedTotp(database.db, userId)).toBe(false);
    expect(await refusal(verifyTotp(database.db, key, { userId, code: await codeAt(second.secret, 1), now }))).toBe('TOTP_NOT_ENROLLED');
    const third = await startTotpEnrolment(database.db, key, { userId, accountName: 'a@acme.test', issuer: 'Latchkey' });
    expect(third.secret).not.toBe(second.secret);
  });
});

describe('TOTP verification', () => {
  it.each([
    ['previous', -1],
    ['current', 0],
    ['next', 1],
  ])('accepts the code of the %s step', async (_label, offset) => {
    const { userId, secret } = await enrolledUser();
    await verifyTotp(database.db, key, { userId, code: await codeAt(secret, offset), now });
    const [row] = await database.db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId));
    expect(row!.lastUsedStep).toBe(STEP_START / 30 + offset);
  });

  it('accepts at the edges of the current step too (first and last second)', async () => {
    const { userId, secret } = await enrolledUser();
    await verifyTotp(database.db, key, { userId, code: await codeAt(secret, -1), now: new Date(STEP_START * 1000) });
    await verifyTotp(database.db, key, { userId, code: await codeAt(secret, 1), now: new Date((STEP_START + 29) * 1000) });
  });

  it('refuses codes two steps away, and wrong codes', async () => {
    const { userId, secret } = await enrolledUser();
    const near = new Set(await Promise.all([-1, 0, 1].map((offset) => codeAt(secret, offset))));
    for (const offset of [-2, 2, -3, 3]) {
      const code = await codeAt(secret, offset);
      if (near.has(code)) continue; // a one-in-a-million collision with an accepted step
      expect(await refusal(verifyTotp(database.db, key, { userId, code, now }))).toBe('TOTP_CODE_INVALID');
    }
    const wrong = ['000000', '111111', '999999'].find((code) => !near.has(code))!;
    expect(await refusal(verifyTotp(database.db, key, { userId, code: wrong, now }))).toBe('TOTP_CODE_INVALID');
    const [row] = await database.db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId));
    expect(row!.lastUsedStep).toBe(STEP_START / 30 - 20);
  });

  it('refuses a replay of the same code, and an older step once a newer one was used, with the same message', async () => {
    const { userId, secret } = await enrolledUser();
    const current = await codeAt(secret, 0);
    await verifyTotp(database.db, key, { userId, code: current, now });
    expect(await refusal(verifyTotp(database.db, key, { userId, code: current, now }))).toBe('TOTP_CODE_REPLAYED');
    // Half a minute later the same code is the previous step's: still used.
    expect(await refusal(verifyTotp(database.db, key, { userId, code: current, now: new Date(now.getTime() + 30_000) }))).toBe(
      'TOTP_CODE_REPLAYED',
    );

    await verifyTotp(database.db, key, { userId, code: await codeAt(secret, 1), now });
    expect(await refusal(verifyTotp(database.db, key, { userId, code: await codeAt(secret, -1), now }))).toBe('TOTP_CODE_REPLAYED');
    expect(TOTP_ERRORS.TOTP_CODE_REPLAYED).toBe(TOTP_ERRORS.TOTP_CODE_INVALID);

    // A clock set back behind the last accepted step accepts nothing (and does not trip otplib's range check).
    const past = new Date((STEP_START - 300) * 1000);
    expect(
      await refusal(verifyTotp(database.db, key, { userId, code: await generate({ secret, epoch: STEP_START - 300 }), now: past })),
    ).toBe('TOTP_CODE_REPLAYED');
  });

  it('of 10 concurrent submissions of one code exactly one succeeds', async () => {
    const { userId, secret } = await enrolledUser();
    const code = await codeAt(secret, 0);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => verifyTotp(database.db, key, { userId, code, now })));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect((result.reason as TotpError).code).toBe('TOTP_CODE_REPLAYED');
    }
  });

  it('refuses malformed codes without touching the database', async () => {
    const { userId, secret } = await enrolledUser();
    const current = await codeAt(secret, 0);
    for (const code of ['', '12345', '1234567', 'abcdef', ` ${current}`, `${current}\n`, '１２３４５６', '12 345', null, 123456]) {
      expect(await countStatements(() => verifyTotp(database.db, key, { userId, code: code as string, now }))).toBe(0);
      expect(await refusal(verifyTotp(database.db, key, { userId, code: code as string, now }))).toBe('TOTP_CODE_INVALID');
    }
    await verifyTotp(database.db, key, { userId, code: current, now });
  });

  it('does not verify with another key (a changed SIGNING_KEY: TOTP_SECRET_UNREADABLE, a refusal, not a server error), nor for another account', async () => {
    const { userId, secret } = await enrolledUser();
    const other = await enrolledUser();
    const code = await codeAt(secret, 0);
    expect(await refusal(verifyTotp(database.db, otherKey, { userId, code, now }))).toBe('TOTP_SECRET_UNREADABLE');
    if (code !== (await codeAt(other.secret, 0))) {
      expect(await refusal(verifyTotp(database.db, key, { userId: other.userId, code, now }))).toBe('TOTP_CODE_INVALID');
    }
    await verifyTotp(database.db, key, { userId, code, now });
  });
});
