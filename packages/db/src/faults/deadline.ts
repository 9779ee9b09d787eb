import { AsyncLocalStorage } from 'node:async_hooks';
import { isPromise } from '@whatwg-node/promise-helpers';

/**
 * One deadline per request that needs the database (DATABASE_TIMEOUT): every statement the request sends, and
 * its wait for a pooled connection, must be answered before it. Kept in an AsyncLocalStorage for the one place
 * the deadline cannot be passed along: oidc-provider's endpoints, and the provider calls a login route makes,
 * whose adapter the library calls back without the request. Every other request passes its own view of the
 * database (`DatabaseHandle.until`). Statements outside any request (background jobs, the CLI) each get a
 * deadline of their own.
 */
const deadlines = new AsyncLocalStorage<number>();

/**
 * Runs `fn` with every database statement it sends bounded by `deadline` (a `performance.now()` time). A
 * thenable result is started here, inside the deadline: drizzle's queries are lazy and would otherwise run
 * wherever they are first awaited.
 */
export function withDatabaseDeadline<T>(deadline: number, fn: () => T): T {
  return deadlines.run(deadline, () => {
    const result = fn();
    if (isPromise(result as unknown)) {
      return new Promise((resolve, reject) => (result as PromiseLike<unknown>).then(resolve, reject)) as T;
    }
    return result;
  });
}

/** The deadline of the request this code runs for, if any. */
export function currentDeadline(): number | undefined {
  return deadlines.getStore();
}
