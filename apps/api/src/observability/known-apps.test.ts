import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { createKnownApps, KNOWN_APPS_REFRESH_MS } from './known-apps.js';

/** The known apps over a list the test changes, on the test's clock, with every log line kept. */
function knownAppsOver(names: string[]) {
  let clock = 1_000_000;
  const reads: number[] = [];
  const lines: string[] = [];
  let failing = false;
  const knownApps = createKnownApps({
    list: async () => {
      reads.push(clock);
      if (failing) throw new Error('connection refused');
      return [...names];
    },
    logger: createLogger('info', {
      destination: new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) }),
    }),
    now: () => clock,
  });
  return {
    knownApps,
    reads,
    lines,
    advance: (ms: number) => void (clock += ms),
    fail: (value: boolean) => void (failing = value),
  };
}

describe('the apps a client-name header may name', () => {
  it('are read at start; a name not known yet reads them again at most once a minute, for the next request', async () => {
    const names = ['ios'];
    const { knownApps, reads, advance } = knownAppsOver(names);
    await knownApps.start();
    expect(knownApps.has('ios')).toBe(true);
    names.push('android'); // imported meanwhile
    advance(KNOWN_APPS_REFRESH_MS - 1);
    expect(knownApps.has('android')).toBe(false);
    expect(knownApps.has('made-up')).toBe(false);
    expect(reads).toHaveLength(1);
    advance(1);
    expect(knownApps.has('android')).toBe(false); // this request does not wait for the read it started
    expect(knownApps.has('made-up')).toBe(false); // one read at a time
    expect(reads).toHaveLength(2);
    await knownApps.start(); // the same read, still in flight
    expect(reads).toHaveLength(2);
    expect(knownApps.has('android')).toBe(true);
  });

  it('a read that fails is logged and keeps the names known; it never throws to the request', async () => {
    const { knownApps, reads, lines, advance, fail } = knownAppsOver(['ios']);
    await knownApps.start();
    fail(true);
    advance(KNOWN_APPS_REFRESH_MS);
    expect(knownApps.has('android')).toBe(false);
    await expect(knownApps.start()).resolves.toBeUndefined();
    expect(reads).toHaveLength(2);
    expect(knownApps.has('ios')).toBe(true);
    expect(lines.map((line) => JSON.parse(line) as { level: number; msg: string })).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringContaining('reading the imported apps failed') }),
    ]);
  });
});
