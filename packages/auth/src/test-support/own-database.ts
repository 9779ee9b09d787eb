import type { DatabaseHandle } from '@latchkey/db';
import { openOwnDatabase } from '@latchkey/db/testing';
import { afterAll, beforeAll } from 'vitest';

// Live binding: assigned by useOwnDatabase's beforeAll, read by the tests of the file that called it.
export let database: DatabaseHandle;
let close: (() => Promise<void>) | undefined;

/**
 * The real database for this file's tests (@latchkey/db/testing's openOwnDatabase): PostgreSQL (a database of
 * its own, named after `label`) when DATABASE_URL is set, else PGlite on disk; opened before the tests, closed
 * after them.
 */
export function useOwnDatabase(label: string): void {
  beforeAll(async () => {
    ({ database, close } = await openOwnDatabase(label));
  });
  afterAll(() => close?.());
}
