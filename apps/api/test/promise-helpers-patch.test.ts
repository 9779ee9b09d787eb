import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// patches/@whatwg-node__promise-helpers@1.3.2.patch backports @whatwg-node/promise-helpers 2.0's synchronous path
// (2.0 itself needs Node 22 and drops `mapMaybePromise`, which @envelop/core 5 still re-exports). Yoga and Envelop
// run every plugin hook through `handleMaybePromise`/`iterateAsync`; unpatched, each call built three fake-promise
// objects with their own closures even when every hook answered at once. These tests load the copy Yoga itself
// resolves, and hold the patch to the old behaviour for every case it changes.
type MaybePromise<T> = T | Promise<T>;
/** The part of the package's API these tests call (it is Yoga's dependency, not this package's). */
interface Helpers {
  fakePromise<T>(value: T): PromiseLike<T>;
  fakeRejectPromise(error: unknown): PromiseLike<never>;
  handleMaybePromise<TIn, TOut>(
    input: () => MaybePromise<TIn>,
    onSuccess: (value: TIn) => MaybePromise<TOut>,
    onError?: (error: any) => MaybePromise<TOut>,
    onFinally?: () => MaybePromise<void>,
  ): MaybePromise<TOut>;
  iterateAsync<T, R>(
    items: Iterable<T>,
    callback: (item: T, endEarly: () => void, index: number) => MaybePromise<R | undefined>,
    results?: R[],
  ): MaybePromise<void>;
}
const yogaRequire = createRequire(createRequire(import.meta.url).resolve('graphql-yoga'));
const helpers = (await import(pathToFileURL(yogaRequire.resolve('@whatwg-node/promise-helpers')).href)) as Helpers;
const { fakePromise, fakeRejectPromise, handleMaybePromise, iterateAsync } = helpers;

describe('the plugin-hook helpers Yoga runs, as patched here', () => {
  it('resolved fake promises share one prototype instead of being fresh object literals with closures', () => {
    const one = fakePromise(1);
    const other = fakePromise(2);
    expect(Object.getPrototypeOf(one)).toBe(Object.getPrototypeOf(other));
    expect(Object.getPrototypeOf(one)).not.toBe(Object.prototype);
    expect(Object.hasOwn(one, 'then')).toBe(false);
    expect(Object.getPrototypeOf(fakeRejectPromise(new Error('x')))).not.toBe(Object.prototype);
  });

  it('a synchronous input and output stay synchronous: a value, not a promise', () => {
    expect(
      handleMaybePromise(
        () => 1,
        (value) => value + 1,
      ),
    ).toBe(2);
    let visited = 0;
    const results: number[] = [];
    const done = iterateAsync(
      [1, 2, 3],
      (value) => {
        visited++;
        return value * 10;
      },
      results,
    );
    expect(done).toBeUndefined();
    expect(visited).toBe(3);
    expect(results).toEqual([10, 20, 30]);
  });

  it('an input that throws goes to the error factory, or is thrown when there is none', () => {
    const boom = new Error('boom');
    const fail = (): number => {
      throw boom;
    };
    expect(
      handleMaybePromise(
        fail,
        () => 'ok',
        (error) => (error === boom ? 'handled' : 'other'),
      ),
    ).toBe('handled');
    expect(() => handleMaybePromise(fail, () => 'ok')).toThrow(boom);
  });

  it('a success factory that throws is thrown, never passed to the error factory (as Promise#then)', () => {
    const boom = new Error('boom');
    let handled = false;
    const run = () =>
      handleMaybePromise(
        () => 1,
        () => {
          throw boom;
        },
        () => {
          handled = true;
        },
      );
    expect(run).toThrow(boom);
    expect(handled).toBe(false);
  });

  it('a promise input gives a promise, resolved or routed to the error factory', async () => {
    await expect(
      handleMaybePromise(
        () => Promise.resolve(1),
        (value) => value + 1,
      ),
    ).resolves.toBe(2);
    const caught = handleMaybePromise(
      () => Promise.reject(new Error('later')),
      () => 'ok',
      (error: Error) => `caught ${error.message}`,
    );
    await expect(caught).resolves.toBe('caught later');
  });

  it('a finally factory runs once, after a value or an error', () => {
    const order: string[] = [];
    expect(
      handleMaybePromise(
        () => 1,
        (value) => value + 1,
        undefined,
        () => void order.push('finally'),
      ),
    ).toBe(2);
    expect(() =>
      handleMaybePromise(
        () => {
          throw new Error('x');
        },
        () => 1,
        undefined,
        () => void order.push('finally after error'),
      ),
    ).toThrow('x');
    expect(order).toEqual(['finally', 'finally after error']);
  });

  it('an early end stops the iteration of hooks', () => {
    const seen: number[] = [];
    iterateAsync([1, 2, 3], (value, endEarly) => {
      seen.push(value);
      if (value === 2) endEarly();
    });
    expect(seen).toEqual([1, 2]);
  });
});
