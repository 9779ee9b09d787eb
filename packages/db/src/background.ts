import { AsyncLocalStorage } from 'node:async_hooks';
import { withoutDatabaseDeadline } from './faults/deadline.js';

const background = new AsyncLocalStorage<true>();

/**
 * Runs `work` as background work of the process (a poll, a purge), not on behalf of a request, even when a
 * request set it off: it runs outside that request's deadline (each statement gets its own), and its statements
 * are not published on QUERY_CHANNEL, so a test counting the statements of one request never counts a poll that
 * happened to run meanwhile.
 */
export function asBackgroundWork<T>(work: () => Promise<T>): Promise<T> {
  return withoutDatabaseDeadline(() => background.run(true, work));
}

/** @internal whether the caller runs inside `asBackgroundWork` */
export function isBackgroundWork(): boolean {
  return background.getStore() === true;
}
