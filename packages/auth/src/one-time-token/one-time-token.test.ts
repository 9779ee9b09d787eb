import { randomBytes } from 'node:crypto';
import { eq, oneTimeTokens, type DatabaseHandle } from '@latchkey/db';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { consumeOneTimeToken, DEFAULT_TTL_SECONDS, generateOneTimeToken, purgeExpiredOneTimeTokens } from '../index.js';
import { openOwnDatabase } from '../test-support/own-database.js';

// The real database: PostgreSQL (a database of its own) when DATABASE_URL is set, else PGlite on disk.
let database: DatabaseHandle;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ database, close: cleanup } = await openOwnDatabase('ott'));
});
afterAll(() => cleanup?.());
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
    for (const wrong of ['', 'x', `${token}x`, token.slice(0, -1), randomBytes(32).toString('base64url'), "' or 1=1 --", token.toUpperCase()]) {
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
