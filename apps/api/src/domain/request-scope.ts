import type { IncomingMessage } from 'node:http';
import type { Database, DatabaseHandle } from '@latchkey/db';
import { requestMemo } from '@latchkey/http';

/**
 * One request as its transport made it, once (a GraphQL operation over HTTP or WebSocket, one event of a
 * subscription, a REST request, a CLI command): the key of its memos (the caller's attributes, the loaders, the
 * database view), its database deadline, and where it came from. A transport may start the deadline itself
 * (GraphQL at the start of execution); else it starts when the request first asks the database. The login and
 * provider routes have their own (`packages/auth/src/web/request-scope.ts`).
 */
export interface RequestScope {
  /** a `performance.now()` time: DATABASE_TIMEOUT after the request's database work began */
  deadline?: number;
  /** the request id (`X-Request-Id`), in logs and audit events; '' where there is none (the CLI) */
  readonly requestId: string;
  /**
   * The HTTP request (a WebSocket operation's: the connection's upgrade request), from which the audit trail takes
   * the client's address and user agent; undefined for the CLI.
   */
  readonly req?: IncomingMessage;
}

/** The database as requests see it: a view per deadline, and where a deadline is started. */
export type RequestDatabase = Pick<DatabaseHandle, 'until' | 'deadlineFromNow'>;

const views = requestMemo<Database>('database view of the request');

/**
 * The database as this request sees it: every statement bounded by the request's deadline. Made once per scope.
 * Passed explicitly rather than found through AsyncLocalStorage, which on Node 20 taxes every promise of the
 * process once it is in use.
 */
export function databaseOf(scope: RequestScope, database: RequestDatabase): Database {
  let db = views.get(scope);
  if (!db) {
    scope.deadline ??= database.deadlineFromNow();
    db = views.set(scope, database.until(scope.deadline));
  }
  return db;
}
