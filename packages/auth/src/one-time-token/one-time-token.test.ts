import { createHash } from 'node:crypto';
import { eq, oneTimeTokens } from '@latchkey/db';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  consumeOneTimeToken,
  consumeShortCode,
  DEFAULT_TTL_SECONDS,
  generateOneTimeToken,
  generateOneTimeTokenWithCode,
  newCodeBinding,
  purgeExpiredOneTimeTokens,
  randomToken,
  revokeShortCodes,
  SHORT_CODE_ATTEMPTS,
} from '../index.js';
import { hashShortCode, newShortCode } from './short-code.js';
import { database, useOwnDatabase } from '../test-support/own-database.js';

useOwnDatabase('ott');
beforeEach(async () => {
  await database.db.delete(oneTimeTokens);
});

describe('one-time tokens (spec One-time token login)', () => {
  it('rule 1: the token is 256 random bits, and only its hash is stored', async () => {
    const generated = await generateOneTimeToken(database.db, { username: '  Alice@Acme.TEST ' });
    expect(generated.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generated.username).toBe('alice@acme.test');
    const rows = await database.db.select().from(oneTimeTokens);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(generated.token);
    expect(rows[0]!.username).toBe('alice@acme.test');
    const other = await generateOneTimeToken(database.db, { username: 'alice@acme.test' });
    expect(other.token).not.toBe(generated.token);
  });

  it('single use: the first consumption signs in, every later one is refused', async () => {
    const { token } = await generateOneTimeToken(database.db, { username: 'alice@acme.test' });
    expect(await consumeOneTimeToken(database.db, token)).toEqual({ username: 'alice@acme.test' });
    expect(await consumeOneTimeToken(database.db, token)).toBeNull();
    expect(await database.db.select().from(oneTimeTokens)).toHaveLength(0);
  });

  it('single use under concurrency: of 10 simultaneous consumptions exactly one wins', async () => {
    const { token } = await generateOneTimeToken(database.db, { username: 'bob@acme.test' });
    const results = await Promise.all(Array.from({ length: 10 }, () => consumeOneTimeToken(database.db, token)));
    expect(results.filter((result) => result !== null)).toEqual([{ username: 'bob@acme.test' }]);
  });

  it('rule 5 and 7: five minutes by default; the generate request may set another time-to-live; expired tokens sign nobody in', async () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const standard = await generateOneTimeToken(database.db, { username: 'alice@acme.test' }, now);
    expect(standard.expiresAt.getTime() - now.getTime()).toBe(DEFAULT_TTL_SECONDS * 1000);
    expect(DEFAULT_TTL_SECONDS).toBe(300);
    const short = await generateOneTimeToken(database.db, { username: 'alice@acme.test', ttlSeconds: 60 }, now);
    expect(short.expiresAt).toEqual(new Date('2026-11-22T12:01:00Z'));
    // One second after the short token's end, the default one still works.
    const later = new Date('2026-11-22T12:01:01Z');
    expect(await consumeOneTimeToken(database.db, short.token, later)).toBeNull();
    expect(await consumeOneTimeToken(database.db, standard.token, later)).toEqual({ username: 'alice@acme.test' });
  });

  it('a time-to-live outside 1 s to 1 day is a programming error, and nothing is stored', async () => {
    for (const ttlSeconds of [0, -5, 1.5, 86_401]) {
      await expect(generateOneTimeToken(database.db, { username: 'alice@acme.test', ttlSeconds })).rejects.toThrow(RangeError);
    }
    expect(await database.db.select().from(oneTimeTokens)).toHaveLength(0);
  });

  it('wrong, malformed and foreign tokens are refused without touching stored ones', async () => {
    const { token } = await generateOneTimeToken(database.db, { username: 'alice@acme.test' });
    for (const wrong of ['', 'x', `${token}x`, token.slice(0, -1), randomToken(), "' or 1=1 --", token.toUpperCase()]) {
      if (wrong === token) continue;
      expect(await consumeOneTimeToken(database.db, wrong)).toBeNull();
    }
    expect(await consumeOneTimeToken(database.db, token)).toEqual({ username: 'alice@acme.test' });
  });

  it('expired tokens are purged; live ones stay', async () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const old = await generateOneTimeToken(database.db, { username: 'a@x.test', ttlSeconds: 10 }, now);
    const live = await generateOneTimeToken(database.db, { username: 'b@x.test', ttlSeconds: 600 }, now);
    expect(await purgeExpiredOneTimeTokens(database.db, new Date('2026-11-22T12:05:00Z'))).toBe(1);
    const left = await database.db.select({ username: oneTimeTokens.username }).from(oneTimeTokens);
    expect(left).toEqual([{ username: 'b@x.test' }]);
    expect(await consumeOneTimeToken(database.db, old.token, now)).toBeNull();
    expect(await consumeOneTimeToken(database.db, live.token, now)).toEqual({ username: 'b@x.test' });
    expect(await database.db.select().from(oneTimeTokens).where(eq(oneTimeTokens.username, 'b@x.test'))).toHaveLength(0);
  });
});

describe('short codes: a second way of presenting a token, typed in the browser that asked for it', () => {
  const alice = 'alice@acme.test';
  const withCode = (binding: string, request: { username: string; ttlSeconds?: number } = { username: alice }, now?: Date) =>
    generateOneTimeTokenWithCode(database.db, request, binding, now);
  const wrongCodeFor = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

  it('a 6-digit code on the same row; only hashes of the code and of the browser binding are stored', async () => {
    const binding = newCodeBinding();
    const generated = await withCode(binding, { username: ' Alice@Acme.TEST ' });
    expect(generated.code).toMatch(/^[0-9]{6}$/);
    expect(generated.username).toBe(alice);
    const rows = await database.db.select().from(oneTimeTokens);
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row!.codeAttempts).toBe(0);
    expect(row!.codeHash).toBe(hashShortCode(binding, row!.tokenHash, alice, generated.code));
    expect(row!.bindingHash).toBe(createHash('sha256').update(binding).digest('base64url'));
    const stored = JSON.stringify(rows);
    for (const secret of [generated.token, binding]) expect(stored).not.toContain(secret);
    // The code hash is keyed by the binding: without it the table gives no way to test a guess.
    expect(row!.codeHash).not.toBe(createHash('sha256').update(generated.code).digest('base64url'));
    // Codes cover all six digits, zero-padded.
    for (let i = 0; i < 200; i++) expect(newShortCode()).toMatch(/^[0-9]{6}$/);
    await expect(generateOneTimeTokenWithCode(database.db, { username: alice }, 'not a binding')).rejects.toThrow(TypeError);
  });

  it("without a username the code is looked up among this browser's codes only, whatever address they were sent to", async () => {
    const binding = newCodeBinding();
    const mine = await withCode(binding);
    expect(await consumeShortCode(database.db, { code: mine.code, binding: newCodeBinding() })).toBeNull();
    expect(await consumeShortCode(database.db, { code: mine.code, binding })).toEqual({ username: alice });
    expect(await consumeShortCode(database.db, { code: mine.code, binding })).toBeNull();
  });

  it('the right code from the right browser signs in once; the link of the same row dies with it, and vice versa', async () => {
    const binding = newCodeBinding();
    const first = await withCode(binding);
    expect(await consumeShortCode(database.db, { username: 'ALICE@acme.test', code: first.code, binding })).toEqual({ username: alice });
    expect(await consumeShortCode(database.db, { username: alice, code: first.code, binding })).toBeNull();
    expect(await consumeOneTimeToken(database.db, first.token)).toBeNull();

    const second = await withCode(binding);
    expect(await consumeOneTimeToken(database.db, second.token)).toEqual({ username: alice });
    expect(await consumeShortCode(database.db, { username: alice, code: second.code, binding })).toBeNull();
    expect(await database.db.select().from(oneTimeTokens)).toHaveLength(0);
  });

  it('another browser, another username or a malformed code gets nothing, and uses up nothing of the budget', async () => {
    const binding = newCodeBinding();
    const { code } = await withCode(binding);
    for (let i = 0; i < SHORT_CODE_ATTEMPTS + 2; i++) {
      expect(await consumeShortCode(database.db, { username: alice, code, binding: newCodeBinding() })).toBeNull();
    }
    expect(await consumeShortCode(database.db, { username: 'bob@acme.test', code, binding })).toBeNull();
    for (const malformed of ['', '12345', '1234567', 'abcdef', ' 12345', '12345\n']) {
      expect(await consumeShortCode(database.db, { username: alice, code: malformed, binding })).toBeNull();
    }
    expect(await consumeShortCode(database.db, { username: alice, code, binding: 'short' })).toBeNull();
    const [row] = await database.db.select().from(oneTimeTokens);
    expect(row!.codeAttempts).toBe(0);
    expect(await consumeShortCode(database.db, { username: alice, code, binding })).toEqual({ username: alice });
  });

  it(`the budget: ${SHORT_CODE_ATTEMPTS} guesses; the last may be right, after it the code is dead but the link still works`, async () => {
    const binding = newCodeBinding();
    const lucky = await withCode(binding);
    for (let i = 0; i < SHORT_CODE_ATTEMPTS - 1; i++)
      expect(await consumeShortCode(database.db, { username: alice, code: wrongCodeFor(lucky.code), binding })).toBeNull();
    expect(await consumeShortCode(database.db, { username: alice, code: lucky.code, binding })).toEqual({ username: alice });

    const unlucky = await withCode(binding);
    for (let i = 0; i < SHORT_CODE_ATTEMPTS; i++)
      expect(await consumeShortCode(database.db, { username: alice, code: wrongCodeFor(unlucky.code), binding })).toBeNull();
    const [row] = await database.db.select().from(oneTimeTokens);
    expect(row).toMatchObject({ codeHash: null, bindingHash: null, codeAttempts: SHORT_CODE_ATTEMPTS });
    expect(await consumeShortCode(database.db, { username: alice, code: unlucky.code, binding })).toBeNull();
    expect(await consumeOneTimeToken(database.db, unlucky.token)).toEqual({ username: alice });
  });

  it('concurrency: of 10 simultaneous right codes exactly one wins; 20 simultaneous wrong ones spend the budget once', async () => {
    const binding = newCodeBinding();
    const { code } = await withCode(binding);
    const results = await Promise.all(Array.from({ length: 10 }, () => consumeShortCode(database.db, { username: alice, code, binding })));
    expect(results.filter((result) => result !== null)).toEqual([{ username: alice }]);

    const other = await withCode(binding);
    const guesses = await Promise.all(
      Array.from({ length: 20 }, () => consumeShortCode(database.db, { username: alice, code: wrongCodeFor(other.code), binding })),
    );
    expect(guesses.every((result) => result === null)).toBe(true);
    const [row] = await database.db.select().from(oneTimeTokens);
    expect(row).toMatchObject({ codeHash: null, codeAttempts: SHORT_CODE_ATTEMPTS });
    expect(await consumeShortCode(database.db, { username: alice, code: other.code, binding })).toBeNull();
  });

  it('an expired code signs nobody in; a token without a code cannot be reached by code', async () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const binding = newCodeBinding();
    const short = await withCode(binding, { username: alice, ttlSeconds: 60 }, now);
    expect(
      await consumeShortCode(database.db, { username: alice, code: short.code, binding }, new Date('2026-11-22T12:01:00Z')),
    ).toBeNull();
    expect(await consumeShortCode(database.db, { username: alice, code: short.code, binding }, new Date('2026-11-22T12:00:59Z'))).toEqual({
      username: alice,
    });
    const plain = await generateOneTimeToken(database.db, { username: alice });
    const [row] = await database.db.select().from(oneTimeTokens);
    expect(row).toMatchObject({ codeHash: null, bindingHash: null, codeAttempts: 0 });
    expect(await consumeOneTimeToken(database.db, plain.token)).toEqual({ username: alice });
  });

  it("revoking a browser kills its outstanding codes only; their links, and other browsers' codes, live on", async () => {
    const stopped = newCodeBinding();
    const bystander = newCodeBinding();
    const [a, b] = [await withCode(stopped), await withCode(stopped, { username: 'bob@acme.test' })];
    const c = await withCode(bystander);
    expect(await revokeShortCodes(database.db, stopped)).toBe(2);
    expect(await revokeShortCodes(database.db, 'malformed')).toBe(0);
    expect(await consumeShortCode(database.db, { username: alice, code: a.code, binding: stopped })).toBeNull();
    expect(await consumeShortCode(database.db, { username: 'bob@acme.test', code: b.code, binding: stopped })).toBeNull();
    expect(await consumeShortCode(database.db, { username: alice, code: c.code, binding: bystander })).toEqual({ username: alice });
    expect(await consumeOneTimeToken(database.db, a.token)).toEqual({ username: alice });
    expect(await consumeOneTimeToken(database.db, b.token)).toEqual({ username: 'bob@acme.test' });
  });
});
