import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from './logger.js';

/** A destination that records what reaches it: lines written, and when the logger asked it to write out its buffer. */
function recordingDestination() {
  const events: string[] = [];
  return {
    events,
    write(line: string) {
      events.push(`write ${(JSON.parse(line) as { msg: string }).msg}`);
    },
    flush() {
      events.push('flush');
    },
    flushSync() {
      events.push('flushSync');
    },
  };
}

describe('createLogger', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('error and fatal lines are written out at once in production; info and warn lines wait for the buffer or the timer', () => {
    const destination = recordingDestination();
    const logger = createLogger('info', { destination, env: 'production' });
    logger.info('one');
    logger.warn('two');
    expect(destination.events).toEqual(['write one', 'write two']);
    logger.error('three');
    logger.fatal('four');
    // A fatal line is written out synchronously (the process ends next), never by an asynchronous write that could
    // still be in flight when it does.
    expect(destination.events).toEqual(['write one', 'write two', 'write three', 'flush', 'write four', 'flushSync']);
  });

  // The timer is faked: "within a second" is the flush interval, not how fast this machine runs a real one.
  it('production: a buffered line is written out within a second even when nothing else is logged (every 500 ms)', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const destination = recordingDestination();
    const logger = createLogger('info', { destination, env: 'production' });
    logger.info('alone');
    vi.advanceTimersByTime(499);
    expect(destination.events).toEqual(['write alone']);
    vi.advanceTimersByTime(1);
    expect(destination.events).toEqual(['write alone', 'flush']);
    vi.advanceTimersByTime(500);
    expect(destination.events).toEqual(['write alone', 'flush', 'flush']);
  });

  it('development: no timer at all (each line is written at once, so none waits for one)', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    const destination = recordingDestination();
    const logger = createLogger('info', { destination, env: 'development' });
    logger.info('at once');
    expect(vi.getTimerCount()).toBe(0);
    expect(destination.events).toEqual(['write at once']);
  });
});
