import type { PendingQuery, Sql } from 'postgres';
import { currentDeadline } from './deadline.js';
import { DatabaseTimeoutError, DatabaseUnavailableError, isDatabaseUnavailable } from './errors.js';
import type { HealthMonitor } from './health.js';
import { PendingList, type Listed } from './pending-list.js';

export interface StatementGuardOptions {
  /** DATABASE_TIMEOUT: the deadline of a statement sent outside any request's deadline */
  timeoutMs: number;
  health: HealthMonitor;
  /** the pool size, for the statistics */
  poolSize: number;
  /** a statement still unanswered after this long makes the health monitor probe. @default min(1000, timeoutMs / 2) */
  suspectAfterMs?: number;
}

interface Pending extends Listed {
  /** the statement (cancelled on timeout); undefined for a whole transaction */
  query: PendingQuery<never[]> | undefined;
  startedAt: number;
  deadline: number;
  /** set only once the deadline is less than a sweep away, so the statement is given up on time, not a sweep late */
  timer?: NodeJS.Timeout;
  reject(error: Error): void;
}

/** How often pending statements are looked at. */
const SWEEP_MS = 25;

/**
 * postgres-js's `query.cancel()` drops the promise of its cancel request, which rejects (unhandled, fatal for
 * the process) when the server cannot be reached. Call its canceller ourselves and keep that promise.
 */
function cancelQuietly(query: PendingQuery<never[]>): void {
  const internal = query as unknown as { canceller?: ((query: unknown) => unknown) | null };
  const canceller = internal.canceller;
  if (typeof canceller !== 'function') return;
  internal.canceller = null;
  Promise.resolve(canceller(query)).catch(() => undefined);
}

/** A view's deadline rule: a fixed time, `'own'` (each statement DATABASE_TIMEOUT from when it is sent), or undefined (the request's). */
type Fixed = number | 'own' | undefined;

export interface PoolStats {
  size: number;
  /** statements handed to a connection and not yet answered (at most the pool size) */
  inUse: number;
  /** statements waiting for a connection (or behind another statement on one) */
  waiting: number;
  /**
   * statements and transactions let through to the database since the pool opened, i.e. not refused at once (a
   * known outage, a deadline already passed): a test counts them to tell "refused at once" from "waited"
   * (PostgreSQL only: the embedded database has no outage to refuse for)
   */
  admitted?: number;
}

/** What one guard's functions share: its settings and the statements now pending. */
interface GuardContext {
  readonly timeoutMs: number;
  readonly health: HealthMonitor;
  readonly suspectAfterMs: number;
  readonly pending: PendingList<Pending>;
  /** the sweep's interval, set only while statements are pending */
  sweep: NodeJS.Timeout | undefined;
  /** statements and transactions let through since the pool opened (PoolStats.admitted) */
  admitted: number;
}

/** Gives up a statement past its deadline: a queued one is taken out of the queue, a running one gets a cancel request. */
function expire(context: GuardContext, entry: Pending): void {
  if (!context.pending.delete(entry)) return;
  if (entry.query) cancelQuietly(entry.query);
  context.health.suspect();
  entry.reject(new DatabaseTimeoutError());
}

/**
 * One sweep for every pending statement (no timer per statement: on the hot path a timer each costs more than
 * the rest of the guard). A statement whose deadline falls before the next sweep gets its own exact timer (the
 * rare path), so none is given up late; one waiting suspiciously long (a black hole looks like this) makes the
 * health monitor probe. Runs only while statements are pending.
 */
function sweepPending(context: GuardContext): void {
  if (context.pending.size === 0) {
    clearInterval(context.sweep);
    context.sweep = undefined;
    return;
  }
  const now = performance.now();
  let suspicious = false;
  for (const entry of context.pending) {
    if (entry.deadline - now <= SWEEP_MS) {
      entry.timer ??= setTimeout(expire, Math.max(0, entry.deadline - now), context, entry);
    } else if (now - entry.startedAt >= context.suspectAfterMs) {
      suspicious = true;
    }
  }
  if (suspicious) context.health.suspect();
}

function refusal(context: GuardContext): Error | undefined {
  if (!context.health.available) return new DatabaseUnavailableError();
  return undefined;
}

/**
 * The deadline of a statement sent now: the one given, its own (`'own'`: background work, never a request's),
 * or the request's (AsyncLocalStorage: oidc-provider's requests), else its own.
 */
function deadlineNow(context: GuardContext, now: number, fixed: Fixed): number {
  if (typeof fixed === 'number') return fixed;
  return (fixed === 'own' ? undefined : currentDeadline()) ?? now + context.timeoutMs;
}

/** Runs one promise-like database call under the deadline; `query` (when given) is cancelled on timeout. */
function bound<T>(
  context: GuardContext,
  fixed: Fixed,
  started: PromiseLike<T> | (() => PromiseLike<T>),
  query?: PendingQuery<never[]>,
): Promise<T> {
  const refused = refusal(context);
  if (refused) return Promise.reject(refused);
  const now = performance.now();
  const deadline = deadlineNow(context, now, fixed);
  if (deadline <= now) return Promise.reject(new DatabaseTimeoutError());
  context.admitted += 1;
  const { pending } = context;
  return new Promise<T>((resolve, reject) => {
    const entry: Pending = { query, startedAt: now, deadline, reject, slot: -1 };
    if (deadline - now <= SWEEP_MS) entry.timer = setTimeout(expire, deadline - now, context, entry);
    pending.add(entry);
    if (!context.sweep) (context.sweep = setInterval(sweepPending, SWEEP_MS, context)).unref();
    (typeof started === 'function' ? started() : started).then(
      (value) => {
        if (!pending.delete(entry)) return;
        if (entry.timer) clearTimeout(entry.timer);
        resolve(value);
      },
      (error: unknown) => {
        if (!pending.delete(entry)) return;
        if (entry.timer) clearTimeout(entry.timer);
        if (isDatabaseUnavailable(error)) context.health.suspect();
        reject(error);
      },
    );
  });
}

/** A lazy postgres-js query made safe to await: what drizzle awaits (`unsafe(...)`, `unsafe(...).values()`). */
function guardQuery(context: GuardContext, query: PendingQuery<never[]>, fixed: Fixed) {
  let promise: Promise<unknown> | undefined;
  const run = () => (promise ??= bound(context, fixed, query, query));
  const guarded = {
    values() {
      query.values();
      return guarded;
    },
    // biome-ignore lint/suspicious/noThenProperty: drizzle awaits the query, so the guarded query must be a thenable
    then<A, B>(onFulfilled?: (value: unknown) => A, onRejected?: (reason: unknown) => B) {
      return run().then(onFulfilled, onRejected);
    },
    catch<B>(onRejected?: (reason: unknown) => B) {
      return run().catch(onRejected);
    },
    finally(onFinally?: () => void) {
      return run().finally(onFinally);
    },
  };
  return guarded;
}

/** The body of a transaction (or savepoint) only starts while its request still has time and the database is up. */
function guardBody<T>(context: GuardContext, deadline: number, fn: (sql: Sql) => T | Promise<T>) {
  return (inner: Sql) => {
    if (performance.now() >= deadline) throw new DatabaseTimeoutError();
    const refused = refusal(context);
    if (refused) throw refused;
    return fn(guardSql(context, inner, deadline));
  };
}

/**
 * `sql` with every statement drizzle sends through it bounded: `unsafe` (all of drizzle's statements),
 * tagged-template calls, `begin` and `savepoint` (their bodies see a guarded client too). Everything else
 * (listen, end, reserve, options) is the client's own. `fixed`: the deadline of every statement sent through
 * it (a request's own view of the pool); without it, the deadline `withDatabaseDeadline` set (oidc-provider's requests).
 */
function guardSql(context: GuardContext, sql: Sql, fixed?: Fixed): Sql {
  // Made once per client or view, not per statement.
  const unsafe = (text: string, parameters?: never[], queryOptions?: object) =>
    guardQuery(context, sql.unsafe(text, parameters, queryOptions as never) as PendingQuery<never[]>, fixed);
  const begin = (...args: unknown[]) => {
    const fn = args.pop() as (inner: Sql) => unknown;
    const mode = (args[0] as string | undefined) ?? '';
    const deadline = deadlineNow(context, performance.now(), fixed);
    return bound(context, deadline, () => sql.begin(mode, guardBody(context, deadline, fn) as never));
  };
  const savepoint = (...args: unknown[]) => {
    const fn = args.pop() as (inner: Sql) => unknown;
    const deadline = deadlineNow(context, performance.now(), fixed);
    return bound(context, deadline, () =>
      (sql as unknown as { savepoint(...rest: unknown[]): Promise<unknown> }).savepoint(...args, guardBody(context, deadline, fn)),
    );
  };
  return new Proxy(sql, {
    apply(target, thisArg, args: unknown[]) {
      const result = Reflect.apply(target, thisArg, args) as unknown;
      const isTemplate = Array.isArray(args[0]) && 'raw' in (args[0] as object);
      return isTemplate ? guardQuery(context, result as PendingQuery<never[]>, fixed) : result;
    },
    get(target, property, receiver) {
      if (property === 'unsafe') return unsafe;
      if (property === 'begin') return begin;
      if (property === 'savepoint') return savepoint;
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

/**
 * Bounds every statement the application sends to PostgreSQL on the client side (a server-side
 * statement_timeout does nothing when packets are black-holed): each is answered before its request's deadline
 * (a view made for the request, or `withDatabaseDeadline` for oidc-provider's), or before DATABASE_TIMEOUT when sent outside a
 * request, or it fails with
 * DatabaseTimeoutError and is cancelled (a queued one never leaves, a running one gets a cancel request). During
 * a known outage statements fail at once with DatabaseUnavailableError. A transaction whose deadline passed
 * before its body started never runs the body (it rolls back), so nothing is written after its request was
 * answered.
 */
export function createStatementGuard(options: StatementGuardOptions) {
  const { timeoutMs, health, poolSize } = options;
  const context: GuardContext = {
    timeoutMs,
    health,
    suspectAfterMs: options.suspectAfterMs ?? Math.min(1000, timeoutMs / 2),
    pending: new PendingList<Pending>(),
    sweep: undefined,
    admitted: 0,
  };
  const { pending } = context;

  return {
    guardSql: (sql: Sql, fixed?: Fixed): Sql => guardSql(context, sql, fixed),
    /** Fails every pending statement at once (an outage became known: nobody waits out a deadline for nothing). */
    rejectPending(): void {
      for (const entry of pending) {
        pending.delete(entry);
        if (entry.timer) clearTimeout(entry.timer);
        entry.reject(new DatabaseUnavailableError());
      }
    },
    stats(): PoolStats {
      // Transactions are counted through their statements, not as a statement of their own.
      let sent = 0;
      let queued = 0;
      for (const entry of pending) {
        if (!entry.query) continue;
        if ((entry.query as unknown as { state?: unknown }).state) sent++;
        else queued++;
      }
      const inUse = Math.min(sent, poolSize);
      return { size: poolSize, inUse, waiting: queued + sent - inUse, admitted: context.admitted };
    },
    close(): void {
      clearInterval(context.sweep);
      context.sweep = undefined;
    },
  };
}
