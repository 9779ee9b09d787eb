/**
 * Values a resolver may have at hand or may have to wait for (a row a loader holds or must fetch, the caller's
 * attributes read or not yet). Combining them without `async` keeps a resolver synchronous whenever all its
 * inputs are at hand: graphql-jit then completes the field without a promise, which on a page of rows is most of
 * what execution costs.
 */
export type AtHand<T> = T | Promise<T>;

export const isPromise = <T>(value: AtHand<T>): value is Promise<T> => typeof (value as { then?: unknown } | null)?.then === 'function';

/** `then(value)` now when `value` is at hand, else once it is. */
export function whenAtHand<T, R>(value: AtHand<T>, then: (value: T) => R): R | Promise<Awaited<R>> {
  return isPromise(value) ? (value.then(then) as Promise<Awaited<R>>) : then(value);
}

/** `then(a, b)` now when both are at hand, else once both are. */
export function whenBothAtHand<A, B, R>(a: AtHand<A>, b: AtHand<B>, then: (a: A, b: B) => R): R | Promise<Awaited<R>> {
  if (!isPromise(a) && !isPromise(b)) return then(a, b);
  return Promise.all([a, b]).then(([settledA, settledB]) => then(settledA, settledB)) as Promise<Awaited<R>>;
}
