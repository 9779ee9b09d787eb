import { describe, expect, it } from 'vitest';
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
  };
}

describe('createLogger (issue 14 point 2)', () => {
  it('error and fatal lines are written out at once in production; info and warn lines wait for the buffer or the timer', () => {
    const destination = recordingDestination();
    const logger = createLogger('info', { destination, env: 'production' });
    logger.info('one');
    logger.warn('two');
    expect(destination.events).toEqual(['write one', 'write two']);
    logger.error('three');
    logger.fatal('four');
    expect(destination.events).toEqual(['write one', 'write two', 'write three', 'flush', 'write four', 'flush']);
  });

  it('production: a buffered line is written out within a second even when nothing else is logged', async () => {
    const destination = recordingDestination();
    const logger = createLogger('info', { destination, env: 'production' });
    logger.info('alone');
    await new Promise((done) => setTimeout(done, 1100));
    expect(destination.events).toContain('flush');
  });
});
