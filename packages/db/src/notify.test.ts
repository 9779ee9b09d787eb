import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from './client.js';
import { listen, notify } from './notify.js';
import { openOwnDatabase } from './testing/own-database.js';

let database: DatabaseHandle;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ database, close } = await openOwnDatabase('notify'));
});
afterAll(() => close?.());

const next = (received: string[], count: number) =>
  new Promise<void>((resolve, reject) => {
    const started = Date.now();
    const poll = () =>
      received.length >= count ? resolve() : Date.now() - started > 5000 ? reject(new Error('no notification')) : setTimeout(poll, 10);
    poll();
  });

describe('LISTEN/NOTIFY between instances', () => {
  it('a payload notified on a channel reaches its listeners, in order; after unlisten, nothing more', async () => {
    const received: string[] = [];
    const stop = await listen(database, 'latchkey_test_events', (payload) => received.push(payload));
    await notify(database, 'latchkey_test_events', '{"n":1}');
    await notify(database, 'latchkey_test_events', '{"n":2}');
    await next(received, 2);
    expect(received).toEqual(['{"n":1}', '{"n":2}']);
    await stop();
    // Nothing more, proved by an event rather than a wait: notifications reach a listening connection in the order
    // their transactions committed, so once a later one on another channel has arrived, {"n":3} would have too.
    const marks: string[] = [];
    const stopMarks = await listen(database, 'latchkey_test_marks', (payload) => marks.push(payload));
    await notify(database, 'latchkey_test_events', '{"n":3}');
    await notify(database, 'latchkey_test_marks', 'after n:3');
    await next(marks, 1);
    await stopMarks();
    expect(received).toHaveLength(2);
  });

  it('refuses a channel that is not an identifier, and a payload PostgreSQL would refuse', async () => {
    await expect(listen(database, 'Bad-Channel', () => {})).rejects.toThrow(RangeError);
    await expect(notify(database, 'latchkey_test_events', 'x'.repeat(8000))).rejects.toThrow(RangeError);
  });
});
