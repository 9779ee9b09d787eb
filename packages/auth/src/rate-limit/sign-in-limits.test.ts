import { onPostgres, runsHere } from '@latchkey/db/testing';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDatabase, sql } from '@latchkey/db';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createSignInLimits,
  DEFAULT_SIGN_IN_LIMIT_POLICY,
  RATE_LIMIT_TABLE,
  type SignInLimitPolicyOverrides,
  type SignInLimits,
  type SignInLimitStore,
} from './index.js';

// Small, fast policies: 2-3 points, 2 s windows. The "window reset" test waits for them once.
const POLICY: SignInLimitPolicyOverrides = {
  generatePerUsername: { points: 2, durationSeconds: 2, blockSeconds: 0 },
  generatePerIp: { points: 3, durationSeconds: 2, blockSeconds: 0 },
  attemptsPerIp: { points: 20, durationSeconds: 2 },
  // no pauses unless a test asks for them
  failuresPerIp: { lockoutAfter: 3, durationSeconds: 2, blockSeconds: 2, slowDownAfter: 3 },
};

const ATTACKER = '198.51.100.7';
const VICTIM = '203.0.113.20';
const ALICE = 'alice@acme.test';

interface StoreFixture {
  store: SignInLimitStore;
  shared: boolean;
  setup(): Promise<void>;
  teardown(): Promise<void>;
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'latchkey-rl-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const fixtures: Array<[string, StoreFixture]> = [
  ['memory', { store: { kind: 'memory' }, shared: false, setup: async () => undefined, teardown: async () => undefined }],
];

const adminUrl = process.env['DATABASE_URL'];
if (adminUrl) {
  // A database of its own, created through the admin URL and dropped afterwards.
  const name = `latchkey_rl_${randomBytes(6).toString('hex')}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const admin = async (statement: string) => {
    const handle = await createDatabase({ url: adminUrl, dataDir, poolSize: 2, timeoutMs: 60_000 }); // drop ... with (force) may wait on a busy server
    try {
      await handle.db.execute(sql.raw(statement));
    } finally {
      await handle.close();
    }
  };
  fixtures.push([
    'postgres',
    {
      store: { kind: 'postgres', url: url.toString() },
      shared: true,
      setup: () => admin(`create database ${name}`),
      teardown: () => admin(`drop database if exists ${name} with (force)`),
    },
  ]);
}

const redisUrl = process.env['TEST_REDIS_URL'] ?? process.env['REDIS_URL'];
// Every key of this run starts with this prefix (tests add a suffix); all of them are deleted afterwards.
const redisRunPrefix = `latchkey-test-${randomBytes(6).toString('hex')}`;
if (
  runsHere(
    'the Redis rate-limit store tests',
    redisUrl ? undefined : 'TEST_REDIS_URL is unset (e.g. TEST_REDIS_URL=redis://127.0.0.1:6379)',
  )
) {
  fixtures.push([
    'redis',
    {
      store: { kind: 'redis', url: redisUrl! },
      shared: true,
      setup: async () => undefined,
      teardown: async () => {
        const client = new Redis(redisUrl!);
        try {
          const keys = await client.keys(`${redisRunPrefix}*`);
          if (keys.length > 0) await client.del(...keys);
          expect(await client.keys(`${redisRunPrefix}*`)).toEqual([]);
        } finally {
          await client.quit();
        }
      },
    },
  ]);
}

describe.each(fixtures)('login rate limits (%s store)', (_kind, fixture) => {
  const opened: SignInLimits[] = [];
  beforeAll(() => fixture.setup());
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((limits) => limits.close()));
  });
  afterAll(() => fixture.teardown());

  /** A fresh prefix per test isolates its counters; pass one to share them. */
  const newPrefix = () => `${redisRunPrefix}-${randomBytes(4).toString('hex')}`;
  async function open(policy: SignInLimitPolicyOverrides = POLICY, keyPrefix = newPrefix()): Promise<SignInLimits> {
    const limits = await createSignInLimits({ store: fixture.store, keyPrefix, policy });
    opened.push(limits);
    return limits;
  }

  it('per-username generation limit: after N requests (from any address, any spelling) the username is refused with Retry-After', async () => {
    const limits = await open();
    expect(await limits.generate('192.0.2.1', ALICE)).toEqual({ allowed: true });
    expect(await limits.generate('192.0.2.2', '  Alice@ACME.test ')).toEqual({ allowed: true });
    const refused = await limits.generate('192.0.2.3', ALICE);
    expect(refused.allowed).toBe(false);
    if (refused.allowed) return;
    expect(refused.retryAfterSeconds).toBeGreaterThan(0);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(2);
    expect(Number.isInteger(refused.retryAfterSeconds)).toBe(true);
    // Other usernames, from the same addresses, are unaffected; existing or not, the module cannot tell.
    expect(await limits.generate('192.0.2.3', 'bob@acme.test')).toEqual({ allowed: true });
    expect(await limits.generate('192.0.2.3', 'nobody-at-all@acme.test')).toEqual({ allowed: true });
  });

  it('per-IP generation limit is independent of the username', async () => {
    const limits = await open();
    for (const username of ['a@x.test', 'b@x.test', 'c@x.test']) {
      expect(await limits.generate(ATTACKER, username)).toEqual({ allowed: true });
    }
    const refused = await limits.generate(ATTACKER, 'd@x.test');
    expect(refused).toMatchObject({ allowed: false });
    expect(refused.allowed === false && refused.retryAfterSeconds).toBeGreaterThan(0);
    // The refused request spent none of d's budget: d can still ask twice from elsewhere.
    expect(await limits.generate(VICTIM, 'd@x.test')).toEqual({ allowed: true });
    expect(await limits.generate(VICTIM, 'd@x.test')).toEqual({ allowed: true });
  });

  it('a generation lockout of the source (blockSeconds) outlasts the window', async () => {
    const limits = await open({ ...POLICY, generatePerIp: { points: 1, durationSeconds: 1, blockSeconds: 5 } });
    expect(await limits.generate(ATTACKER, 'a@x.test')).toEqual({ allowed: true });
    const refused = await limits.generate(ATTACKER, 'b@x.test');
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: 5 });
  });

  it('consumption attempts are limited per IP', async () => {
    const limits = await open({ ...POLICY, attemptsPerIp: { points: 3, durationSeconds: 2 } });
    for (let i = 0; i < 3; i++) expect(await limits.beforeAttempt(ATTACKER)).toEqual({ allowed: true });
    expect(await limits.beforeAttempt(ATTACKER)).toMatchObject({ allowed: false });
    expect(await limits.beforeAttempt(VICTIM)).toEqual({ allowed: true });
  });

  it('wrong tokens lock out the sending IP; another IP, and the user from their own IP, still generate and consume', async () => {
    const limits = await open();
    // The victim asked for a token; the attacker hammers the consume endpoint with wrong ones.
    expect(await limits.generate(VICTIM, ALICE)).toEqual({ allowed: true });
    for (let i = 0; i < 3; i++) {
      expect(await limits.beforeAttempt(ATTACKER)).toEqual({ allowed: true });
      await limits.afterFailure(ATTACKER);
    }
    const locked = await limits.beforeAttempt(ATTACKER);
    expect(locked).toMatchObject({ allowed: false });
    expect(locked.allowed === false && locked.retryAfterSeconds).toBeGreaterThan(0);
    // Further failures while locked out change nothing and do not throw.
    await limits.afterFailure(ATTACKER);
    expect(await limits.beforeAttempt(ATTACKER)).toMatchObject({ allowed: false });
    // The account is not locked: Alice, on her own address, generates and signs in.
    expect(await limits.beforeAttempt(VICTIM)).toEqual({ allowed: true });
    await limits.afterSuccess(VICTIM);
    expect(await limits.generate(VICTIM, ALICE)).toEqual({ allowed: true });
    expect(await limits.beforeAttempt('192.0.2.99')).toEqual({ allowed: true });
  });

  it('a username whose generation budget a stranger exhausted can still consume the token it received', async () => {
    const limits = await open();
    expect(await limits.generate(VICTIM, ALICE)).toEqual({ allowed: true }); // Alice's own request
    expect(await limits.generate(ATTACKER, ALICE)).toEqual({ allowed: true });
    expect(await limits.generate(ATTACKER, ALICE)).toMatchObject({ allowed: false });
    expect(await limits.beforeAttempt(VICTIM)).toEqual({ allowed: true });
  });

  it('wrong tokens first slow the source down (growing pauses), then lock it out; each failure says which it did', async () => {
    const limits = await open({
      ...POLICY,
      failuresPerIp: { lockoutAfter: 4, durationSeconds: 5, blockSeconds: 7, slowDownAfter: 2, slowDownBaseSeconds: 1 },
    });
    expect(await limits.afterFailure(ATTACKER)).toBe('counted');
    expect(await limits.beforeAttempt(ATTACKER)).toEqual({ allowed: true }); // one mistake: no pause
    expect(await limits.afterFailure(ATTACKER)).toBe('paused');
    expect(await limits.beforeAttempt(ATTACKER)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(await limits.afterFailure(ATTACKER)).toBe('paused');
    expect(await limits.beforeAttempt(ATTACKER)).toEqual({ allowed: false, retryAfterSeconds: 2 });
    expect(await limits.afterFailure(ATTACKER)).toBe('locked-out');
    expect(await limits.beforeAttempt(ATTACKER)).toEqual({ allowed: false, retryAfterSeconds: 7 });
    // Further failures of a locked-out source start no new lockout (metrics count lockouts, not failures).
    expect(await limits.afterFailure(ATTACKER)).toBe('counted');
    expect(await limits.beforeAttempt(VICTIM)).toEqual({ allowed: true });
  });

  it('afterSuccess resets the failure count of that IP', async () => {
    const limits = await open();
    await limits.afterFailure(ATTACKER);
    await limits.afterFailure(ATTACKER);
    await limits.afterSuccess(ATTACKER);
    await limits.afterFailure(ATTACKER);
    await limits.afterFailure(ATTACKER);
    expect(await limits.beforeAttempt(ATTACKER)).toEqual({ allowed: true }); // 2 since the success, not 4
    await limits.afterFailure(ATTACKER);
    expect(await limits.beforeAttempt(ATTACKER)).toMatchObject({ allowed: false });
  });

  it('window(): another per-source budget in the same store, shared by instances with the same prefix; other sources unaffected', async () => {
    const prefix = newPrefix();
    const first = (await open(POLICY, prefix)).window('pq-register', { points: 2, durationSeconds: 60, blockSeconds: 0 });
    // Memory counters are per process: there the "second instance" is the first one again.
    const second = fixture.shared
      ? (await open(POLICY, prefix)).window('pq-register', { points: 2, durationSeconds: 60, blockSeconds: 0 })
      : first;
    expect(await first(ATTACKER)).toEqual({ allowed: true });
    expect(await second(ATTACKER)).toEqual({ allowed: true });
    const refused = await first(ATTACKER);
    expect(refused).toMatchObject({ allowed: false });
    expect((refused as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(0);
    expect(await second('198.51.100.99')).toEqual({ allowed: true });
    const limits = await open(POLICY, prefix);
    expect(() => limits.window('Bad Name', { points: 1, durationSeconds: 1, blockSeconds: 0 })).toThrow(RangeError);
  });

  it('IPv6 sources count per /64 and IPv4-mapped addresses as their IPv4 address', async () => {
    const limits = await open({ ...POLICY, generatePerIp: { points: 2, durationSeconds: 2, blockSeconds: 0 } });
    expect(await limits.generate('2001:db8:1:2::1', 'a@x.test')).toEqual({ allowed: true });
    expect(await limits.generate('2001:0DB8:0001:0002:ffff:1:2:3', 'b@x.test')).toEqual({ allowed: true });
    expect(await limits.generate('[2001:db8:1:2::abcd]', 'c@x.test')).toMatchObject({ allowed: false });
    expect(await limits.generate('2001:db8:1:3::1', 'c@x.test')).toEqual({ allowed: true });
    expect(await limits.generate('::ffff:192.0.2.50', 'd@x.test')).toEqual({ allowed: true });
    expect(await limits.generate('192.0.2.50', 'e@x.test')).toEqual({ allowed: true });
    expect(await limits.generate('::FFFF:192.0.2.50', 'f@x.test')).toMatchObject({ allowed: false });
  });

  it('windows and lockouts end: after the duration the username and the IP are allowed again', async () => {
    // Windows of 2 s, so that the calls meant to fall inside one do even when the machine is busy (each is a statement
    // on the PostgreSQL store); the wait is counted from the last of them, by when every window and block has begun.
    const limits = await open({
      ...POLICY,
      generatePerUsername: { points: 1, durationSeconds: 2, blockSeconds: 0 },
      failuresPerIp: { lockoutAfter: 1, durationSeconds: 2, blockSeconds: 2, slowDownAfter: 1 },
    });
    expect(await limits.generate(VICTIM, ALICE)).toEqual({ allowed: true });
    expect(await limits.generate(VICTIM, ALICE)).toMatchObject({ allowed: false });
    await limits.afterFailure(ATTACKER);
    const locked = await limits.beforeAttempt(ATTACKER);
    const lastCounted = Date.now();
    expect(locked).toMatchObject({ allowed: false });
    if (locked.allowed) return;
    expect(locked.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(locked.retryAfterSeconds).toBeLessThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, lastCounted + 2_500 - Date.now())));
    expect(await limits.generate(VICTIM, ALICE)).toEqual({ allowed: true });
    expect(await limits.beforeAttempt(ATTACKER)).toEqual({ allowed: true });
  });

  it.runIf(runsHere('shared counts', fixture.shared ? undefined : 'this store is not shared by design', { inCi: 'skip' }))(
    'shared counts: two instances on the same store count as one service',
    async () => {
      const prefix = newPrefix();
      // Opened concurrently: two processes starting at once (PostgreSQL: concurrent table creation).
      const [one, two] = await Promise.all([open(POLICY, prefix), open(POLICY, prefix)]);
      expect(await one.generate('192.0.2.1', ALICE)).toEqual({ allowed: true });
      expect(await two.generate('192.0.2.2', ALICE)).toEqual({ allowed: true });
      expect(await one.generate('192.0.2.3', ALICE)).toMatchObject({ allowed: false });
      expect(await two.generate('192.0.2.4', ALICE)).toMatchObject({ allowed: false });
      // Failures seen by one instance lock the source out on the other.
      await one.afterFailure(ATTACKER);
      await two.afterFailure(ATTACKER);
      await one.afterFailure(ATTACKER);
      expect(await two.beforeAttempt(ATTACKER)).toMatchObject({ allowed: false });
      expect(await one.beforeAttempt(ATTACKER)).toMatchObject({ allowed: false });
      // A success seen by one resets the count for both.
      await two.afterFailure(VICTIM);
      await two.afterFailure(VICTIM);
      await one.afterSuccess(VICTIM);
      await two.afterFailure(VICTIM);
      expect(await one.beforeAttempt(VICTIM)).toEqual({ allowed: true });
      // A third instance with another prefix counts separately.
      const other = await open(POLICY);
      expect(await other.generate('192.0.2.5', ALICE)).toEqual({ allowed: true });
    },
  );

  it.runIf(
    runsHere('the table of the PostgreSQL store', fixture.store.kind === 'postgres' ? undefined : 'not the PostgreSQL store', {
      inCi: 'skip',
    }),
  )('postgres: the limiter creates its own rate_limits table', async () => {
    await open();
    if (fixture.store.kind !== 'postgres') return;
    const client = new pg.Client({ connectionString: fixture.store.url });
    await client.connect();
    try {
      const result = await client.query(`select to_regclass('public.${RATE_LIMIT_TABLE}') is not null as present`);
      expect(result.rows).toEqual([{ present: true }]);
    } finally {
      await client.end();
    }
  });
});

describe('login rate limits: configuration', () => {
  it('the documented defaults', () => {
    expect(DEFAULT_SIGN_IN_LIMIT_POLICY).toEqual({
      generatePerUsername: { points: 5, durationSeconds: 900, blockSeconds: 0 },
      generatePerIp: { points: 20, durationSeconds: 900, blockSeconds: 900 },
      attemptsPerIp: { points: 30, durationSeconds: 900, blockSeconds: 0 },
      failuresPerIp: { lockoutAfter: 5, durationSeconds: 900, blockSeconds: 900, slowDownAfter: 2, slowDownBaseSeconds: 2 },
    });
  });

  it('a policy that is not whole positive numbers, or a bad key prefix, is refused before any store is opened', async () => {
    const store = { kind: 'postgres', url: 'postgres://nobody@127.0.0.1:1/none' } as const;
    await expect(createSignInLimits({ store, policy: { generatePerIp: { points: 0 } } })).rejects.toThrow(RangeError);
    await expect(createSignInLimits({ store, policy: { attemptsPerIp: { durationSeconds: 1.5 } } })).rejects.toThrow(RangeError);
    await expect(createSignInLimits({ store, policy: { failuresPerIp: { blockSeconds: 0 } } })).rejects.toThrow(RangeError);
    await expect(createSignInLimits({ store, keyPrefix: 'has space' })).rejects.toThrow(RangeError);
  });

  it('an unreachable store fails at creation, not at the first login', async () => {
    await expect(createSignInLimits({ store: { kind: 'postgres', url: 'postgres://nobody@127.0.0.1:1/none' } })).rejects.toThrow();
    await expect(createSignInLimits({ store: { kind: 'redis', url: 'redis://127.0.0.1:1' } })).rejects.toThrow();
  });
});

describe.runIf(onPostgres('the PostgreSQL-only tests'))('login rate limits: instances starting together (PostgreSQL store)', () => {
  it('several instances opening the store at once on a fresh database all start: the table is created once, a concurrent creation is not an error', async () => {
    const name = `latchkey_rl_start_${randomBytes(6).toString('hex')}`;
    const admin = await createDatabase({ url: adminUrl!, dataDir, poolSize: 2, timeoutMs: 60_000 });
    try {
      await admin.db.execute(sql.raw(`create database ${name}`));
      const url = new URL(adminUrl!);
      url.pathname = `/${name}`;
      // PostgreSQL's CREATE TABLE IF NOT EXISTS, run by several sessions at once, can fail on the table's row type.
      const opened = await Promise.allSettled(
        Array.from({ length: 8 }, () => createSignInLimits({ store: { kind: 'postgres', url: url.toString() }, policy: POLICY })),
      );
      const failures = opened.filter((outcome) => outcome.status === 'rejected').map((outcome) => String(outcome.reason));
      await Promise.all(opened.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.close() : undefined)));
      expect(failures).toEqual([]);
    } finally {
      await admin.db.execute(sql.raw(`drop database if exists ${name} with (force)`));
      await admin.close();
    }
  });
});
