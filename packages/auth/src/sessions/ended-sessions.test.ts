import { randomUUID } from 'node:crypto';
import { DatabaseUnavailableError, endedSessions, listSignedOutSession, revokedAppKey, type Database } from '@latchkey/db';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { database, useOwnDatabase } from '../test-support/own-database.js';
import { createEndedSessions } from './ended-sessions.js';

// The ended-sessions list's two time rules, on the real database with an injected clock and
// the reads counted, so that neither depends on how fast the machine is: the HTTP tests (sessions-outage,
// sessions-scale-out, e2e-sessions) only wait for the refusals these rules produce.

useOwnDatabase('ended-sessions');

/** A database every statement of which fails, as one that cannot be reached. */
const unreachable = {
  select() {
    throw new Error('connection refused');
  },
} as unknown as Database;

/** A reader on the test database, with a clock the test moves and a switch that makes its reads fail. */
function reader(options: { staleAfterMs?: number } = {}) {
  let at = 1_000_000;
  let failing = false;
  let reads = 0;
  const failures: unknown[] = [];
  const ended = createEndedSessions({
    // `db` is looked up at each read: counting the look-ups counts the reads.
    get db() {
      reads += 1;
      return failing ? unreachable : database.background;
    },
    now: () => at,
    onRefreshFailed: (error) => failures.push(error),
    ...options,
  });
  return {
    ended,
    failures,
    get reads() {
      return reads;
    },
    advance(ms: number) {
      at += ms;
    },
    fail(value: boolean) {
      failing = value;
    },
  };
}

describe('the ended sessions list: 5 s after its last good read, a session cannot be judged', () => {
  it('keeps judging through failed reads up to 5 s (the default) after the last good one, then throws DatabaseUnavailableError; one good read ends that', async () => {
    const list = reader();
    await list.ended.refresh();
    expect(list.ended.isEnded('session-a')).toBe(false);

    list.fail(true);
    // Reads fail every second (the reading interval) for five seconds: the list read at 0 still judges.
    for (let second = 1; second <= 5; second++) {
      list.advance(1000);
      await list.ended.refresh();
      expect(list.ended.isEnded('session-a'), `${second} s after the last good read`).toBe(false);
    }
    // The first failure is told once, not once per read.
    expect(list.failures).toHaveLength(1);
    // One millisecond past 5 s, nothing is judged on that list any more: the caller refuses with SERVICE_UNAVAILABLE.
    list.advance(1);
    expect(() => list.ended.isEnded('session-a')).toThrow(DatabaseUnavailableError);
    expect(() => list.ended.isEnded('session-a')).toThrow('Sessions cannot be checked right now.');

    list.fail(false);
    await list.ended.refresh();
    expect(list.ended.isEnded('session-a')).toBe(false);
    // A later outage is told again.
    list.fail(true);
    await list.ended.refresh();
    expect(list.failures).toHaveLength(2);
  });

  it('measures the 5 s from the last good read, not from the first failed one', async () => {
    const list = reader();
    await list.ended.refresh();
    list.advance(4000);
    list.fail(true);
    await list.ended.refresh();
    // The first failed read comes 4 s after the last good one: 1 s later it is the 5 s that count.
    list.advance(1000);
    expect(list.ended.isEnded('session-a')).toBe(false);
    list.advance(1);
    expect(() => list.ended.isEnded('session-a')).toThrow(DatabaseUnavailableError);
  });

  it('a list never read judges nothing', () => {
    expect(() => reader().ended.isEnded('session-a')).toThrow(DatabaseUnavailableError);
  });

  it('staleAfterMs sets the bound', async () => {
    const list = reader({ staleAfterMs: 2000 });
    await list.ended.refresh();
    list.advance(2000);
    expect(list.ended.isEnded('session-a')).toBe(false);
    list.advance(1);
    expect(() => list.ended.isEnded('session-a')).toThrow(DatabaseUnavailableError);
  });
});

describe('the ended sessions list: a session ended on another instance is refused here from the next read', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is read at start and then every second (the default): a session listed in between is ended here after the next read, within the 5 s', async () => {
    // Only the reading timer is faked: the reads themselves are real statements on the real database.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const here = reader();
    await here.ended.start();
    try {
      expect(here.reads).toBe(1);
      const sessionUid = randomUUID();
      // Another instance ends it: the row every instance reads.
      await listSignedOutSession(database.db, sessionUid, new Date(Date.now() + 600_000));
      expect(here.ended.isEnded(sessionUid)).toBe(false);

      vi.advanceTimersByTime(999);
      expect(here.reads).toBe(1);
      vi.advanceTimersByTime(1);
      expect(here.reads).toBe(2);
      await here.ended.refresh(); // the read the timer started (one at a time: this is that one)
      expect(here.reads).toBe(2);
      expect(here.ended.isEnded(sessionUid)).toBe(true);
    } finally {
      here.ended.stop();
    }
  });

  it('a session ended here is refused at once, before any read', async () => {
    const here = reader();
    await here.ended.refresh();
    const sessionUid = randomUUID();
    here.ended.add(sessionUid, new Date(1_000_000 + 600_000));
    expect(here.ended.isEnded(sessionUid)).toBe(true);
    expect(here.reads).toBe(1);
  });
});

describe('the ended sessions list: apps revoked by their users (Connected apps), listed in the same table', () => {
  it('refuses a client’s tokens for that user issued at or before the revocation’s second, on another instance after its next read; later ones pass', async () => {
    const here = reader();
    await here.ended.refresh();
    const userId = randomUUID();
    const revokedAt = new Date(1_000_000 - 10_000); // ten seconds before the reader's clock
    // Another instance revokes the app: the row every instance reads.
    await database.db
      .insert(endedSessions)
      .values({ sessionUid: revokedAppKey(userId, 'photo-app'), endedAt: revokedAt, expiresAt: new Date(Date.now() + 600_000) });
    const revokedSecond = Math.floor(revokedAt.getTime() / 1000);
    expect(here.ended.isAppRevoked('photo-app', userId, revokedSecond - 5)).toBe(false);

    await here.ended.refresh();
    expect(here.ended.isAppRevoked('photo-app', userId, revokedSecond - 5)).toBe(true);
    expect(here.ended.isAppRevoked('photo-app', userId, revokedSecond)).toBe(true);
    expect(here.ended.isAppRevoked('photo-app', userId, revokedSecond + 1)).toBe(false);
    expect(here.ended.isAppRevoked('other-app', userId, revokedSecond - 5)).toBe(false);
    expect(here.ended.isAppRevoked('photo-app', randomUUID(), revokedSecond - 5)).toBe(false);
    // A revoked app is no ended session.
    expect(here.ended.isEnded(revokedAppKey(userId, 'photo-app'))).toBe(false);
  });

  it('an app revoked here is refused at once, before any read, and stays so across reads that do not see it yet', async () => {
    const here = reader();
    await here.ended.refresh();
    const userId = randomUUID();
    here.ended.addRevokedApp(userId, 'photo-app', new Date(1_000_000), new Date(1_000_000 + 600_000));
    expect(here.ended.isAppRevoked('photo-app', userId, 999)).toBe(true);
    await here.ended.refresh();
    expect(here.ended.isAppRevoked('photo-app', userId, 999)).toBe(true);
    expect(here.ended.isAppRevoked('photo-app', userId, 1001)).toBe(false);
  });
});
