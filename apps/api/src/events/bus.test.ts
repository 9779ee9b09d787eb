import { notify, type DatabaseHandle } from '@latchkey/db';
import { openOwnDatabase } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBus, createPostgresBus, createRedisBus } from './bus.js';
import { parseDocumentEvent, type DocumentEvent, type EventBus } from './types.js';

const redisUrl = process.env['TEST_REDIS_URL'] ?? process.env['REDIS_URL'];
const sample = (n: number): DocumentEvent => ({
  id: `e${n}`,
  kind: 'CREATED',
  documentId: `d${n}`,
  organizationId: 'o1',
  ownerId: 'u1',
  status: 'DRAFT',
  embargoUntil: null,
  at: 1_700_000_000_000 + n,
});

async function collect(bus: EventBus, publisher: EventBus, count: number): Promise<DocumentEvent[]> {
  const received: DocumentEvent[] = [];
  const stop = bus.subscribe((event) => received.push(event));
  for (let n = 1; n <= count; n++) await publisher.publish(sample(n));
  for (let i = 0; i < 300 && received.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  stop();
  return received;
}

describe('event buses (fan-out of document events across instances)', () => {
  let database: DatabaseHandle;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ database, close } = await openOwnDatabase('event_bus'));
  });
  afterAll(() => close?.());

  it('memory: events reach this process\'s listeners in order', async () => {
    const bus = createMemoryBus();
    expect(await collect(bus, bus, 3)).toEqual([sample(1), sample(2), sample(3)]);
  });

  it('LISTEN/NOTIFY: an event published by one instance reaches the listeners of another (and its own), in order; malformed payloads are dropped and reported', async () => {
    const invalid: string[] = [];
    const one = await createPostgresBus(database, (payload) => invalid.push(payload));
    const two = await createPostgresBus(database, (payload) => invalid.push(payload));
    try {
      expect(await collect(two, one, 3)).toEqual([sample(1), sample(2), sample(3)]);
      expect(await collect(one, one, 1)).toEqual([sample(1)]);
      await notify(database, 'latchkey_document_events', '{"kind":"DROP TABLE"}');
      for (let i = 0; i < 100 && invalid.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(invalid).toEqual(['{"kind":"DROP TABLE"}', '{"kind":"DROP TABLE"}']);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it.runIf(redisUrl)('Redis pub/sub: the same across two instances', async () => {
    const one = await createRedisBus(redisUrl!, () => undefined);
    const two = await createRedisBus(redisUrl!, () => undefined);
    try {
      expect(await collect(two, one, 3)).toEqual([sample(1), sample(2), sample(3)]);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('a Redis URL that cannot be reached fails at start-up, not at the first event', async () => {
    const errors: Error[] = [];
    await expect(createRedisBus('redis://127.0.0.1:1', () => undefined, (error) => errors.push(error))).rejects.toThrow();
    expect(errors.length).toBeGreaterThan(0);
  });

  it.each([
    ['not JSON', 'x'],
    ['an unknown kind', JSON.stringify({ ...sample(1), kind: 'EXPLODED' })],
    ['a missing id', JSON.stringify({ ...sample(1), id: undefined })],
    ['a wrong date type', JSON.stringify({ ...sample(1), embargoUntil: 5 })],
    ['an over-long id', JSON.stringify({ ...sample(1), documentId: 'x'.repeat(200) })],
  ])('parseDocumentEvent refuses %s', (_name, text) => {
    expect(parseDocumentEvent(text)).toBeUndefined();
  });
});
