import type { MaybePromise } from '@whatwg-node/promise-helpers';
import type { BucketSize } from '../config/budget.js';
import { createMemoryBudgetStore, type Admission, type BudgetStore, type MemoryBudgetStore } from './bucket.js';
import type { SharedBuckets } from './shared-buckets.js';

/**
 * The buckets every instance shares, spent without a round trip per operation: an instance reserves a slice of a
 * caller's shared bucket (a twentieth of its capacity, or what one operation needs when that is more) and admits
 * from it locally until it is spent; refunds go back into the slice, and what a slice holds beyond its size, or
 * still holds once its caller has been idle a while, is given back to the shared bucket.
 *
 * The bound (docs/graphql.md, "Budgets"): a slice is taken only from what the shared bucket holds, so across N
 * instances what is admitted over any window is at most capacity + refill x window + N x slice (the slices the
 * instances held when the window began).
 *
 * While the shared store fails (Redis or PostgreSQL down), each instance decides alone with a bucket of its own
 * (the memory store), so up to N x capacity is admitted meanwhile; the store is asked again at most once per
 * `retryMs`, and `onFault` / `onRecovered` mark the outage's two ends.
 */
export interface SlicedStoreOptions {
  shared: SharedBuckets;
  /** milliseconds; the same clock the callers pass as `now` */
  now: () => number;
  /** A slice's size for a bucket. @default a twentieth of the capacity, at least 1 */
  sliceOf?: (size: BucketSize) => number;
  /** Idle this long, a caller's slice is given back to the shared bucket. @default 1000 */
  holdMs?: number;
  /**
   * Idle this long, what is known of a caller's shared bucket is forgotten; longer than any operation runs (the
   * server ends a request within 30 s), so that one settled after its slice went back is reported from what is known.
   * @default 60000
   */
  forgetMs?: number;
  /** After a failure, the shared store is asked again after this long. @default 1000 */
  retryMs?: number;
  /**
   * Callers known at once (a slice and the level last seen, about 240 bytes each); beyond it, the one known longest
   * goes, what it holds given back first, so a flood of new callers (guest addresses) holds a bounded memory.
   * @default 100000
   */
  maxCallers?: number;
  /** The first failure of an outage. */
  onFault?: (error: unknown) => void;
  /** The shared store answers again after an outage. */
  onRecovered?: () => void;
  /** Counts each decision taken by the local bucket because the shared store failed. */
  onLocalDecision?: () => void;
}

/** What an instance holds of one caller's shared bucket. */
interface Slice {
  size: BucketSize;
  /** points reserved and not yet spent (negative: a debt, charged to the shared bucket with the next reservation) */
  held: number;
  /** the shared bucket's level when it last answered, and when (what is reported; a recent refusal's estimate) */
  shared: number;
  seenAt: number;
  /** whether the shared bucket has answered for this caller yet (until then it is believed full) */
  known: boolean;
  usedAt: number;
  /**
   * The call to the shared bucket in flight: the next one is sent once it has answered, so that answers come back in
   * the order the shared store applied them (the level last seen is the newest), and admissions that need more than
   * the slice holds wait for it rather than reserving too.
   */
  inFlight?: Promise<unknown>;
}

/** Refused: `available` points of the `cost`; waiting for the rest to refill helps (it fits the capacity). */
const refusal = (slice: Slice, cost: number, available: number): Admission => ({
  admitted: false,
  available: Math.floor(available),
  exceedsCapacity: false,
  retryAfterSeconds: Math.ceil((cost - available) / slice.size.restorePerSecond),
});

const twentieth = (size: BucketSize) => Math.max(1, size.capacity / 20);

/** What is reported as available: the slice and the shared bucket as last seen, refilled since. */
function levelOf(slice: Slice, at: number): number {
  const { capacity, restorePerSecond } = slice.size;
  const refilled = Math.min(capacity, slice.shared + (Math.max(0, at - slice.seenAt) * restorePerSecond) / 1000);
  return Math.min(capacity, slice.held + refilled);
}

type Outage = ReturnType<typeof createOutage>;

/** The slices this instance holds, one per caller, and how they go back to the shared buckets. */
function createSliceBook(shared: SharedBuckets, outage: Outage, now: () => number, maxCallers: number) {
  const slices = new Map<string, Slice>();
  const seen = (slice: Slice, level: number) => {
    slice.shared = level;
    slice.seenAt = now();
    slice.known = true;
    outage.answered();
  };
  /** Sends `call` once the slice's call in flight has answered (see `Slice.inFlight`). */
  const send = <T>(slice: Slice, call: () => Promise<T>): Promise<T> => {
    const sent = slice.inFlight ? slice.inFlight.then(call) : call();
    const answered = sent.then(
      () => undefined,
      () => undefined,
    );
    slice.inFlight = answered;
    void answered.then(() => {
      if (slice.inFlight === answered) slice.inFlight = undefined;
    });
    return sent;
  };
  /** Gives back a slice's points (or its debt); on failure they are kept, to be spent or given back later. */
  const giveBack = (key: string, slice: Slice, points: number) => {
    // Moved from the slice to the shared bucket as reported at once (what is available has not changed).
    slice.held -= points;
    slice.shared += points;
    send(slice, () => shared.give(key, slice.size, points)).then(
      (level) => seen(slice, level),
      (error) => {
        slice.held += points;
        slice.shared -= points;
        outage.failed(error);
      },
    );
  };
  /**
   * Makes room for one more caller: the one known longest (the map's first) without a call in flight goes, what it
   * holds given back. It is known afresh at its next operation (one round trip).
   */
  const forgetOldest = () => {
    for (const [key, slice] of slices) {
      if (slice.inFlight) continue;
      slices.delete(key);
      if (slice.held !== 0 && !outage.down) giveBack(key, slice, slice.held);
      return;
    }
  };
  return {
    slices,
    seen,
    send,
    giveBack,
    sliceFor(key: string, size: BucketSize, at: number): Slice {
      let slice = slices.get(key);
      if (!slice) {
        if (slices.size >= maxCallers) forgetOldest();
        // Until the shared bucket answers, it is believed full (only what is reported depends on it).
        slice = { size, held: 0, shared: size.capacity, seenAt: at, usedAt: at, known: false };
        slices.set(key, slice);
      }
      slice.size = size;
      slice.usedAt = at;
      return slice;
    },
    /** Gives back the slices of callers idle since `idleSince`; forgets those idle since `forgottenSince`. */
    sweep(idleSince: number, forgottenSince: number) {
      for (const [key, slice] of slices) {
        if (slice.usedAt > idleSince || slice.inFlight) continue;
        if (slice.held !== 0 && !outage.down) giveBack(key, slice, slice.held);
        else if (slice.usedAt <= forgottenSince && slice.held === 0) slices.delete(key);
      }
    },
    /** Gives back every slice (closing: a deploy must not cost callers what the instance held). */
    async drain() {
      const held = [...slices].filter(([, slice]) => slice.held !== 0);
      slices.clear();
      await Promise.allSettled(held.map(([key, slice]) => shared.give(key, slice.size, slice.held)));
    },
  };
}

export function createSlicedStore(options: SlicedStoreOptions): BudgetStore & { close(): Promise<void> } {
  const { shared, now, sliceOf = twentieth, holdMs = 1000, forgetMs = 60_000, retryMs = 1000, maxCallers = 100_000 } = options;
  const local: MemoryBudgetStore = createMemoryBudgetStore();
  const outage = createOutage({ ...options, retryMs, now });
  const book = createSliceBook(shared, outage, now, maxCallers);
  const decideLocally = (key: string, size: BucketSize, cost: number, at: number) => {
    options.onLocalDecision?.();
    return local.take(key, size, cost, at);
  };

  const reserve = (key: string, slice: Slice, cost: number): Promise<Admission> => {
    const least = cost - slice.held;
    const most = Math.max(least, sliceOf(slice.size));
    return book
      .send(slice, () => shared.reserve(key, slice.size, least, most))
      .then(
        ({ granted, level }): Admission => {
          book.seen(slice, level);
          if (granted === 0) return refusal(slice, cost, levelOf(slice, now()));
          slice.held += granted - cost;
          return { admitted: true, available: Math.floor(levelOf(slice, now())), exceedsCapacity: false };
        },
        (error): Admission => {
          outage.failed(error);
          return decideLocally(key, slice.size, cost, now());
        },
      );
  };

  const take = (key: string, size: BucketSize, cost: number, at: number): MaybePromise<Admission> => {
    if (!Number.isFinite(cost) || cost < 0) throw new RangeError(`a cost is a finite number of at least 0, not ${cost}`);
    if (outage.deciding(at)) return decideLocally(key, size, cost, at);
    const slice = book.sliceFor(key, size, at);
    if (cost > size.capacity) return { admitted: false, available: Math.floor(levelOf(slice, at)), exceedsCapacity: true };
    if (slice.held >= cost) {
      slice.held -= cost;
      return { admitted: true, available: Math.floor(levelOf(slice, at)), exceedsCapacity: false };
    }
    if (slice.inFlight) return slice.inFlight.then(() => take(key, size, cost, now()));
    // Refused by what the shared bucket said a moment ago, refilled since: a caller flooding past its budget costs
    // no round trip per refusal (the others' slices come back within `holdMs`).
    const estimate = levelOf(slice, at);
    if (slice.known && at - slice.seenAt < retryMs && estimate < cost) return refusal(slice, cost, estimate);
    return reserve(key, slice, cost);
  };

  const settle = (key: string, size: BucketSize, delta: number, at: number): number => {
    if (!Number.isFinite(delta)) throw new RangeError(`a delta is a finite number, not ${delta}`);
    if (outage.deciding(at)) return local.settle(key, size, delta, at);
    const slice = book.sliceFor(key, size, at);
    slice.held = Math.max(-size.capacity, slice.held - delta);
    // A refund beyond the slice's size goes back at once: an instance never holds more than a slice.
    const excess = slice.held - sliceOf(size);
    if (excess > 0) book.giveBack(key, slice, excess);
    return Math.floor(levelOf(slice, at));
  };

  const sweeper = setInterval(() => book.sweep(now() - holdMs, now() - forgetMs), holdMs);
  sweeper.unref();

  return {
    take,
    settle,
    peek(key, size, at) {
      const slice = book.slices.get(key);
      if (!slice) {
        if (outage.down) return local.peek(key, size, at);
        return shared.peek(key, size).then(Math.floor, () => local.peek(key, size, now()));
      }
      // A caller in use is reported from what its slice knows; one idle a while is asked of the shared bucket again
      // (other instances may have spent from it since).
      if (outage.down || at - slice.usedAt < holdMs) return Math.floor(levelOf(slice, at));
      const known = () => Math.floor(levelOf(slice, now()));
      return book
        .send(slice, () => shared.peek(key, size))
        .then((level) => {
          book.seen(slice, level);
          return known();
        }, known);
    },
    reset(key) {
      book.slices.delete(key);
      local.reset(key);
      return shared.reset(key);
    },
    async close() {
      clearInterval(sweeper);
      await book.drain();
    },
  };
}

/** An outage of the shared store: its first failure, the retries at most once per `retryMs`, its end. */
function createOutage(options: Pick<SlicedStoreOptions, 'onFault' | 'onRecovered'> & { retryMs: number; now: () => number }) {
  let retryAt = 0;
  const state = {
    down: false,
    /** Whether the local bucket decides now: during an outage, except once per `retryMs` (a probe). */
    deciding(at: number) {
      if (!state.down || at < retryAt) return state.down;
      retryAt = at + options.retryMs;
      return false;
    },
    failed(error: unknown) {
      retryAt = options.now() + options.retryMs;
      if (state.down) return;
      state.down = true;
      options.onFault?.(error);
    },
    answered() {
      if (!state.down) return;
      state.down = false;
      options.onRecovered?.();
    },
  };
  return state;
}
