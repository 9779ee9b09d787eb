import { describe, expect, it } from 'vitest';
import { createMemoryBus } from './bus.js';
import { createSubscriptionHub } from './subscription-hub.js';
import type { DocumentEvent } from './types.js';

let n = 0;
const event = (organizationId: string, documentId = `doc-${++n}`): DocumentEvent => ({
  id: `event-${++n}`,
  kind: 'UPDATED',
  documentId,
  organizationId,
  ownerId: 'owner',
  status: 'PUBLISHED',
  embargoUntil: null,
  at: Date.now(),
});

describe('the subscription hub of one instance (issue 7: limits and bounded buffers)', () => {
  it('hands each event to the subscribers of its organization only, in order, one lookup memo shared by all of them', async () => {
    const bus = createMemoryBus();
    const hub = createSubscriptionHub({ bus });
    const acme1 = hub.open('u1', 'acme')!;
    const acme2 = hub.open('u2', 'acme')!;
    const globex = hub.open('u3', 'globex')!;
    await bus.publish(event('acme', 'a'));
    await bus.publish(event('acme', 'b'));
    const [first, second] = [await acme1.next(), await acme1.next()];
    expect([first, second].map((delivery) => ('event' in delivery ? delivery.event.documentId : delivery))).toEqual(['a', 'b']);
    const other = await acme2.next();
    expect('event' in other && 'event' in first && other.memo === first.memo).toBe(true);
    globex.close();
    expect(await globex.next()).toEqual({ end: 'closed' });
    await hub.close();
  });

  it('a subscriber that does not keep up is dropped once its queue is full: its memory does not grow', async () => {
    const bus = createMemoryBus();
    const hub = createSubscriptionHub({ bus, maxQueuedEvents: 3 });
    const slow = hub.open('u1', 'acme')!;
    const fast = hub.open('u2', 'acme')!;
    for (let i = 0; i < 4; i++) {
      await bus.publish(event('acme'));
      await fast.next();
    }
    expect(await slow.next()).toEqual({ end: 'overflow' });
    expect(hub.size()).toBe(1);
    await hub.close();
    expect(await fast.next()).toEqual({ end: 'closed' });
  });

  it('counts open subscriptions per user and frees them on close', async () => {
    const hub = createSubscriptionHub({ bus: createMemoryBus(), maxPerUser: 2 });
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

  it('a narrowed subscriber (one document) receives only that document\'s events', async () => {
    const bus = createMemoryBus();
    const hub = createSubscriptionHub({ bus });
    const one = hub.open('u1', 'acme', (candidate) => candidate.documentId === 'mine')!;
    await bus.publish(event('acme', 'other'));
    await bus.publish(event('acme', 'mine'));
    const delivery = await one.next();
    expect('event' in delivery && delivery.event.documentId).toBe('mine');
    await hub.close();
  });
});
