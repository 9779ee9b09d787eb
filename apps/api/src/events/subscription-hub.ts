import type { DocumentEvent, EventSource } from './types.js';

export interface SubscriptionHubOptions {
  /** every instance's committed events, in order (the event outbox's reader) */
  source: EventSource;
  /** events waiting for one subscriber; one more and that subscriber is dropped (slow consumer). @default 64 */
  maxQueuedEvents?: number;
  /** open subscriptions of one user on this instance. @default 20 */
  maxPerUser?: number;
}

/**
 * Lookups shared by every subscriber of one event on this instance: the document as it is now, read once, and
 * each user's volatile attributes, read once per user (so a thousand subscribers cost a handful of queries).
 */
export interface EventMemo {
  readonly shared: Map<string, Promise<unknown>>;
}

export interface Delivery {
  event: DocumentEvent;
  memo: EventMemo;
}

/**
 * Why a subscriber's stream ended on the server's side: too slow (`overflow`), events lost to this instance
 * (`interrupted`), or closed.
 */
export type EndReason = 'overflow' | 'interrupted' | 'closed';

export interface Subscriber {
  /** The next event for this subscriber; `{ end }` once it is dropped (slow consumer), interrupted, or the hub closes. */
  next(): Promise<Delivery | { end: EndReason }>;
  /** Removes the subscriber (idempotent). */
  close(): void;
}

/** What the subscriber queues of one hub share: the queue bound, and the registries a queue leaves when it ends. */
interface HubRegistry {
  readonly maxQueued: number;
  readonly byOrganization: Map<string, Set<SubscriberQueue>>;
  readonly perUser: Map<string, number>;
}

class SubscriberQueue implements Subscriber {
  private readonly items: Delivery[] = [];
  private waiting: ((value: Delivery | { end: EndReason }) => void) | undefined;
  private ended: EndReason | undefined;

  constructor(
    private readonly registry: HubRegistry,
    readonly userId: string,
    readonly organizationId: string,
    readonly accepts: (event: DocumentEvent) => boolean,
  ) {}

  push(delivery: Delivery): void {
    if (this.ended || !this.accepts(delivery.event)) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve(delivery);
    } else if (this.items.length >= this.registry.maxQueued) {
      this.end('overflow');
    } else {
      this.items.push(delivery);
    }
  }

  next(): Promise<Delivery | { end: EndReason }> {
    const item = this.items.shift();
    if (item) return Promise.resolve(item);
    if (this.ended) return Promise.resolve({ end: this.ended });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  end(reason: EndReason): void {
    if (this.ended) return;
    this.ended = reason;
    this.items.length = 0;
    this.detach();
    const resolve = this.waiting;
    this.waiting = undefined;
    resolve?.({ end: reason });
  }

  close(): void {
    this.end('closed');
  }

  private detach(): void {
    const { byOrganization, perUser } = this.registry;
    const set = byOrganization.get(this.organizationId);
    if (set?.delete(this) && set.size === 0) byOrganization.delete(this.organizationId);
    const count = (perUser.get(this.userId) ?? 1) - 1;
    if (count <= 0) perUser.delete(this.userId);
    else perUser.set(this.userId, count);
  }
}

/**
 * Subscriptions on this instance: events from the source (every instance's) are handed to the subscribers of
 * the event's organization, each through a bounded queue, so a subscriber that does not keep up is dropped
 * instead of growing memory. When the source lost events, every subscriber ends as `interrupted` (none can be
 * sure it missed nothing). Counts subscriptions per user.
 */
export function createSubscriptionHub(options: SubscriptionHubOptions) {
  const maxPerUser = options.maxPerUser ?? 20;
  const byOrganization = new Map<string, Set<SubscriberQueue>>();
  const perUser = new Map<string, number>();
  const registry: HubRegistry = { maxQueued: options.maxQueuedEvents ?? 64, byOrganization, perUser };
  let closed = false;

  const endAll = (reason: EndReason) => {
    for (const set of [...byOrganization.values()]) for (const queue of [...set]) queue.end(reason);
  };
  const unsubscribe = options.source.subscribe(
    (event) => {
      const subscribers = byOrganization.get(event.organizationId);
      if (!subscribers) return;
      const delivery: Delivery = { event, memo: { shared: new Map() } };
      for (const subscriber of [...subscribers]) subscriber.push(delivery);
    },
    () => endAll('interrupted'),
  );

  return {
    /**
     * A subscriber to one organization's events (`accepts` narrows them, e.g. to one document); undefined
     * when the user already has `maxPerUser` open here.
     */
    open(userId: string, organizationId: string, accepts: (event: DocumentEvent) => boolean = () => true): Subscriber | undefined {
      if (closed) return undefined;
      const count = perUser.get(userId) ?? 0;
      if (count >= maxPerUser) return undefined;
      perUser.set(userId, count + 1);
      const queue = new SubscriberQueue(registry, userId, organizationId, accepts);
      let set = byOrganization.get(organizationId);
      if (!set) byOrganization.set(organizationId, (set = new Set()));
      set.add(queue);
      return queue;
    },
    /** Whether this instance is shutting down (no subscription opens any more). */
    get closed(): boolean {
      return closed;
    },
    /** Open subscriptions on this instance (for tests and metrics). */
    size(): number {
      let total = 0;
      for (const set of byOrganization.values()) total += set.size;
      return total;
    },
    async close(): Promise<void> {
      closed = true;
      unsubscribe();
      endAll('closed');
    },
  };
}

export type SubscriptionHub = ReturnType<typeof createSubscriptionHub>;
