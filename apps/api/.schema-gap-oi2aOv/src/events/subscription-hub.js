/**
 * Subscriptions on this instance: events from the source (every instance's) are handed to the subscribers of
 * the event's organization, each through a bounded queue, so a subscriber that does not keep up is dropped
 * instead of growing memory. When the source lost events, every subscriber ends as `interrupted` (none can be
 * sure it missed nothing). Counts subscriptions per user.
 */
export function createSubscriptionHub(options) {
    const maxQueued = options.maxQueuedEvents ?? 64;
    const maxPerUser = options.maxPerUser ?? 20;
    const byOrganization = new Map();
    const perUser = new Map();
    let closed = false;
    class Queue {
        userId;
        organizationId;
        accepts;
        items = [];
        waiting;
        ended;
        constructor(userId, organizationId, accepts) {
            this.userId = userId;
            this.organizationId = organizationId;
            this.accepts = accepts;
        }
        push(delivery) {
            if (this.ended || !this.accepts(delivery.event))
                return;
            if (this.waiting) {
                const resolve = this.waiting;
                this.waiting = undefined;
                resolve(delivery);
            }
            else if (this.items.length >= maxQueued) {
                this.end('overflow');
            }
            else {
                this.items.push(delivery);
            }
        }
        next() {
            const item = this.items.shift();
            if (item)
                return Promise.resolve(item);
            if (this.ended)
                return Promise.resolve({ end: this.ended });
            return new Promise((resolve) => (this.waiting = resolve));
        }
        end(reason) {
            if (this.ended)
                return;
            this.ended = reason;
            this.items.length = 0;
            this.detach();
            const resolve = this.waiting;
            this.waiting = undefined;
            resolve?.({ end: reason });
        }
        close() {
            this.end('closed');
        }
        detach() {
            const set = byOrganization.get(this.organizationId);
            if (set?.delete(this) && set.size === 0)
                byOrganization.delete(this.organizationId);
            const count = (perUser.get(this.userId) ?? 1) - 1;
            if (count <= 0)
                perUser.delete(this.userId);
            else
                perUser.set(this.userId, count);
        }
    }
    const endAll = (reason) => {
        for (const set of [...byOrganization.values()])
            for (const queue of [...set])
                queue.end(reason);
    };
    const unsubscribe = options.source.subscribe((event) => {
        const subscribers = byOrganization.get(event.organizationId);
        if (!subscribers)
            return;
        const delivery = { event, memo: { shared: new Map() } };
        for (const subscriber of [...subscribers])
            subscriber.push(delivery);
    }, () => endAll('interrupted'));
    return {
        /**
         * A subscriber to one organization's events (`accepts` narrows them, e.g. to one document); undefined
         * when the user already has `maxPerUser` open here.
         */
        open(userId, organizationId, accepts = () => true) {
            if (closed)
                return undefined;
            const count = perUser.get(userId) ?? 0;
            if (count >= maxPerUser)
                return undefined;
            perUser.set(userId, count + 1);
            const queue = new Queue(userId, organizationId, accepts);
            let set = byOrganization.get(organizationId);
            if (!set)
                byOrganization.set(organizationId, (set = new Set()));
            set.add(queue);
            return queue;
        },
        /** Whether this instance is shutting down (no subscription opens any more). */
        get closed() {
            return closed;
        },
        /** Open subscriptions on this instance (for tests and metrics). */
        size() {
            let total = 0;
            for (const set of byOrganization.values())
                total += set.size;
            return total;
        },
        async close() {
            closed = true;
            unsubscribe();
            endAll('closed');
        },
    };
}
//# sourceMappingURL=subscription-hub.js.map