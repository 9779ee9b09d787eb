import type { IncomingMessage } from 'node:http';
import { currentDeadline, type Database } from '@latchkey/db';
import { describe, expect, it } from 'vitest';
import { createLoginScopes } from './request-scope.js';

/** A database whose views are tagged with their deadline; each new deadline is the next number. */
function countingDatabase() {
  let next = 1000;
  const views: number[] = [];
  const database = {
    deadlineFromNow: () => next++,
    until: (deadline: number) => {
      views.push(deadline);
      return { deadline } as unknown as Database;
    },
  };
  return { database, views };
}

const request = () => ({}) as IncomingMessage;

describe('a login request has one database scope, passed explicitly (DATABASE_TIMEOUT per request)', () => {
  it('makes one view per request, on first use, and another for another request', () => {
    const { database, views } = countingDatabase();
    const scopes = createLoginScopes(database);
    const first = request();
    expect(views).toEqual([]);
    const db = scopes.dbOf(first);
    expect(scopes.dbOf(first)).toBe(db);
    expect(views).toEqual([1000]);
    expect(scopes.dbOf(request())).not.toBe(db);
    expect(views).toEqual([1000, 1001]);
  });

  it("runs a call into the provider under that request's deadline, and only that call", async () => {
    const { database } = countingDatabase();
    const scopes = createLoginScopes(database);
    const req = request();
    scopes.dbOf(req);
    expect(await scopes.inProvider(req, async () => currentDeadline())).toBe(1000);
    expect(scopes.inProvider(request(), () => currentDeadline())).toBe(1001);
    expect(currentDeadline()).toBeUndefined();
  });
});
