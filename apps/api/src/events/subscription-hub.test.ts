import type { DocumentRow } from '@latchkey/db';
import { openOwnDatabase } from '@latchkey/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { createEventRecorder } from './outbox.js';
import { startOutboxReader, type OutboxReader } from './outbox-reader.js';
import { createSubscriptionHub } from './subscription-hub.js';
import { createMemoryWake } from './wake.js';

// The hub is fed by the real outbox reader over the real database (PGlite, or PostgreSQL with DATABASE_URL).
let close: () => Promise<void>;
let reader: OutboxReader;
let emit: (organizationId: string, documentId?: string) => Promise<void>;
let n = 0;

beforeAll(async () => {
  const own = await openOwnDatabase('subscription_hub');
  close = own.close;
  const wake = createMemoryWake();
  reader = await startOutboxReader({ database: own.database, wake, retentionSeconds: 600, logger: createLogger('silent') });
  const recorder = createEventRecorder(wake, reader.wake);
  emit = async (organizationId, documentId = `doc-${++n}`) => {
    const row = { id: documentId, organizationId, ownerId: 'owner', status: 'PUBLISHED', embargoUntil: null } as unknown as DocumentRow;
    await own.database.db.transaction((tx) => recorder.record(tx, 'UPDATED', row));
    recorder.committed();
  };
});
afterAll(async () => {
  await reader?.close();
  await close?.();
});

describe('the subscription hub of one instance (limits and bounded buffers)', () => {
  it('hands each event to the subscribers of its organization only, in order, one lookup memo shared by all of them', async () => {
    const hub = createSubscriptionHub({ source: reader });
    const acme1 = hub.open('u1', 'acme')!;
    const acme2 = hub.open('u2', 'acme')!;
    const globex = hub.open('u3', 'globex')!;
    await emit('acme', 'a');
    await emit('acme', 'b');
    const [first, second] = [await acme1.next(), await acme1.next()];
    expect([first, second].map((delivery) => ('event' in delivery ? delivery.event.documentId : delivery))).toEqual(['a', 'b']);
    const other = await acme2.next();
    expect('event' in other && 'event' in first && other.memo === first.memo).toBe(true);
    globex.close();
    expect(await globex.next()).toEqual({ end: 'closed' });
    await hub.close();
  });

  it('a subscriber that does not keep up is dropped once its queue is full: its memory does not grow', async () => {
    const hub = createSubscriptionHub({ source: reader, maxQueuedEvents: 3 });
    const slow = hub.open('u1', 'acme')!;
    const fast = hub.open('u2', 'acme')!;
    for (let i = 0; i < 4; i++) {
      await emit('acme');
      await fast.next();
    }
    expect(await slow.next()).toEqual({ end: 'overflow' });
    expect(hub.size()).toBe(1);
    await hub.close();
    expect(await fast.next()).toEqual({ end: 'closed' });
  });

  it('counts open subscriptions per user and frees them on close', async () => {
    const hub = createSubscriptionHub({ source: reader, maxPerUser: 2 });
    const a = hub.open('u1', 'acme')!;
    hub.open('u1', 'globex');
    expect(hub.open('u1', 'acme')).toBeUndefined();
    expect(hub.open('u2', 'acme')).toBeDefined();
    a.close();
    a.close();
    expect(hub.open('u1', 'acme')).toBeDefined();
    expect(hub.size()).toBe(3);
    await hub.close();
    expect(hub.size()).toBe(0);
    expect(hub.open('u9', 'acme')).toBeUndefined();
  });

  it("a narrowed subscriber (one document) receives only that document's events", async () => {
    const hub = createSubscriptionHub({ source: reader });
    const one = hub.open('u1', 'acme', (candidate) => candidate.documentId === 'mine')!;
    await emit('acme', 'other');
    await emit('acme', 'mine');
    const delivery = await one.next();
    expect('event' in delivery && delivery.event.documentId).toBe('mine');
    await hub.close();
  });
});
