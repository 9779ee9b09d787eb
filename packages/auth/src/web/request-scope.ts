import type { IncomingMessage } from 'node:http';
import { type Database, type DatabaseHandle, withDatabaseDeadline } from '@latchkey/db';
import { requestMemo } from '@latchkey/http';

/** The database as the login routes are given it: a view per deadline, and where a deadline is started. */
export type LoginDatabase = Pick<DatabaseHandle, 'until' | 'deadlineFromNow'>;

/**
 * One login request's database scope: its deadline (DATABASE_TIMEOUT from its first database work, as a
 * `performance.now()` time) and its view of the database, bounded by that deadline.
 */
interface LoginScope {
  deadline: number;
  db: Database;
}

/** What a login route asks of its request's scope. */
export interface LoginScopes {
  /** The database as this request sees it: every statement bounded by the request's one deadline. */
  dbOf(req: IncomingMessage): Database;
  /**
   * Runs a call into oidc-provider (interaction details, its session, finishing an interaction) under this
   * request's deadline: the provider's adapter is called back without the request, so it finds the deadline
   * through `withDatabaseDeadline`, the one AsyncLocalStorage.
   */
  inProvider<T>(req: IncomingMessage, fn: () => T): T;
}

/**
 * The login routes' request scopes: one per request (a memo on its IncomingMessage, gone with it), made when the
 * request first asks the database. Passed explicitly, as GraphQL and REST pass theirs, rather than found through
 * AsyncLocalStorage, which on Node 20 taxes every promise of the process once it is in use.
 */
export function createLoginScopes(database: LoginDatabase): LoginScopes {
  const scopes = requestMemo<LoginScope>('login scope of the request');
  const scopeOf = (req: IncomingMessage): LoginScope => {
    const scope = scopes.get(req);
    if (scope) return scope;
    const deadline = database.deadlineFromNow();
    return scopes.set(req, { deadline, db: database.until(deadline) });
  };
  return {
    dbOf: (req) => scopeOf(req).db,
    inProvider: (req, fn) => withDatabaseDeadline(scopeOf(req).deadline, fn),
  };
}
