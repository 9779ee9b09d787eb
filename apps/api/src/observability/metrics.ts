import { createRequire } from 'node:module';
import type { Factor } from '@latchkey/auth';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { LabelledHistogram } from './labelled-histogram.js';

/** The database pool as its client reports it; undefined when the client cannot tell (the gauges are then absent). */
export interface PoolStats {
  inUse: number;
  waiting: number;
  size: number;
}

export interface MetricSources {
  /** which database the pool belongs to (the `database` label of the pool gauges) */
  database: 'postgres' | 'pglite';
  /** read at each scrape */
  poolStats: () => PoolStats | undefined;
  /** open subscriptions on this instance (SSE and WebSocket), read at each scrape */
  openSubscriptions: () => number;
  /** open GraphQL WebSocket connections on this instance, read at each scrape */
  webSocketConnections: () => number;
}

/** How a credential was submitted: the factor it proves, in the sign-in policy's vocabulary (OTT, TOTP, ...). */
export type SignInMethod = Factor;

/** The counters of one sign-in method, bound once (no label lookup per event). */
export interface SignInCounters {
  attempt(): void;
  success(): void;
  failure(): void;
  lockout(): void;
}

const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/**
 * prom-client's default metrics (process CPU and memory, heap, event-loop lag, handles, ...) but its GC histogram:
 * that one observes every garbage collection through a PerformanceObserver, which measured here cost 20-40% of
 * the throughput of allocation-heavy requests (a page of documents on PGlite). Each default metric is a module
 * of prom-client's own (`lib/metrics/<name>`) that registers itself, as collectDefaultMetrics does in a loop.
 */
function collectProcessMetrics(registry: Registry): void {
  const load = createRequire(import.meta.url);
  for (const name of collectDefaultMetrics.metricsList) {
    if (name === 'gc') continue;
    (load(`prom-client/lib/metrics/${name}`) as (registry: Registry, config: object) => void)(registry, {
      eventLoopMonitoringPrecision: 10,
    });
  }
}

/** The four sign-in counters, labelled by method, and each method's counters bound once. */
function signInCounters(registers: Registry[]): (method: SignInMethod) => SignInCounters {
  const counters = {
    attempts: new Counter({
      name: 'latchkey_sign_in_attempts_total',
      help: 'Credentials submitted for checking, refused by a rate limit or not',
      labelNames: ['method'] as const,
      registers,
    }),
    successes: new Counter({
      name: 'latchkey_sign_in_successes_total',
      help: 'Credentials that verified',
      labelNames: ['method'] as const,
      registers,
    }),
    failures: new Counter({
      name: 'latchkey_sign_in_failures_total',
      help: 'Credentials that did not verify (wrong, used or expired)',
      labelNames: ['method'] as const,
      registers,
    }),
    lockouts: new Counter({
      name: 'latchkey_sign_in_lockouts_total',
      help: 'Client addresses locked out, counted on the failure that locked them out',
      labelNames: ['method'] as const,
      registers,
    }),
  };
  const byMethod = new Map<SignInMethod, SignInCounters>();
  return (method) => {
    let bound = byMethod.get(method);
    if (!bound) {
      const [attempts, successes, failures, lockouts] = [counters.attempts, counters.successes, counters.failures, counters.lockouts].map(
        (counter) => counter.labels(method),
      );
      bound = {
        attempt: () => attempts!.inc(),
        success: () => successes!.inc(),
        failure: () => failures!.inc(),
        lockout: () => lockouts!.inc(),
      };
      byMethod.set(method, bound);
    }
    return bound;
  };
}

/**
 * A counter of two labels, counted into a plain map and handed to prom-client when scraped: its inc() hashes the label
 * object each time (about 1 us per operation in a CPU profile of `{ status }`). The first label's values never hold a
 * space (operation names, schema coordinates), so `first second` keys one series.
 */
function countedAtScrape<First extends string, Second extends string>(
  name: string,
  help: string,
  labelNames: readonly [First, Second],
  registers: Registry[],
): (first: string, second: string) => void {
  const pending = new Map<string, { labels: Record<First | Second, string>; count: number }>();
  new Counter({
    name,
    help,
    labelNames,
    registers,
    collect() {
      for (const series of pending.values()) {
        if (series.count > 0) this.inc(series.labels, series.count);
        series.count = 0;
      }
    },
  });
  const [firstName, secondName] = labelNames;
  return (first, second) => {
    const key = `${first} ${second}`;
    const series = pending.get(key);
    if (series) series.count += 1;
    else pending.set(key, { labels: { [firstName]: first, [secondName]: second } as Record<First | Second, string>, count: 1 });
  };
}

/** The counters GraphQL operations are counted in, per operation: which ran, and which deprecated coordinates they used. */
function operationCounters(registers: Registry[]) {
  return {
    graphqlOperation: countedAtScrape(
      'latchkey_graphql_operations_total',
      'GraphQL operations executed or subscribed, by allowlisted name (else `other`) and type',
      ['operation_name', 'operation_type'],
      registers,
    ),
    deprecatedUse: countedAtScrape(
      'latchkey_deprecated_uses_total',
      'Uses of deprecated schema coordinates (one per coordinate an operation uses), by coordinate and client (a token client_id, an imported app, or `unknown`)',
      ['coordinate', 'client'],
      registers,
    ),
  };
}

/** The gauges of the pool, the subscriptions and the WebSocket connections, read from `sources` when scraped. */
function scrapeGauges(sources: MetricSources, registers: Registry[]): void {
  // Gauges read at scrape time: nothing to update on the hot path.
  const poolGauge = (name: string, help: string, pick: (stats: PoolStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['database'] as const,
      registers,
      collect() {
        this.reset();
        const stats = sources.poolStats();
        if (stats) this.set({ database: sources.database }, pick(stats));
      },
    });
  poolGauge('latchkey_db_pool_connections_in_use', 'Database connections serving a request', (stats) => stats.inUse);
  poolGauge('latchkey_db_pool_waiting', 'Requests waiting for a database connection', (stats) => stats.waiting);
  poolGauge('latchkey_db_pool_size', 'Database connections the pool may open', (stats) => stats.size);
  const readGauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  readGauge('latchkey_subscriptions_open', 'Open GraphQL subscriptions on this instance (SSE and WebSocket)', sources.openSubscriptions);
  readGauge('latchkey_websocket_connections_open', 'Open GraphQL WebSocket connections on this instance', sources.webSocketConnections);
}

/** Error codes are the server's own, but a bound keeps a bug from turning them into a leak. */
const MAX_ERROR_CODES = 64;
const ERROR_CODE = /^[A-Z][A-Z0-9_]{0,63}$/;

/**
 * The metrics of one service instance, in a registry of its own (several instances in one process, as in the
 * tests, must not share prom-client's global one). Every label value is chosen by the server: route templates,
 * status codes, factor names, limit names, error codes; never a path, name or value a client sent.
 */
export function createServiceMetrics(sources: MetricSources) {
  const registry = new Registry();
  collectProcessMetrics(registry);
  const registers = [registry];

  const http = new LabelledHistogram(
    'latchkey_http_request_duration_seconds',
    'HTTP requests by route template and status (`aborted`: the client left before the answer was written); _count is the number of requests',
    ['route', 'status'] as const,
    HTTP_BUCKETS,
    registry,
  );

  const signIn = signInCounters(registers);
  const refusals = new Counter({
    name: 'latchkey_rate_limit_refusals_total',
    help: 'Requests refused by a rate limit (429 with Retry-After)',
    // `plan` only for the budgets' refusals (limit="api-budget"): FREE, PRO or guest.
    labelNames: ['limit', 'plan'] as const,
    registers,
  });
  const budgetSpent = new Counter({
    name: 'latchkey_budget_cost_admitted_total',
    help: 'Cost points admitted by the budgets (an operation at its actual cost, a REST request at its page size), by plan',
    labelNames: ['plan'] as const,
    registers,
  });
  const budgetLocal = new Counter({
    name: 'latchkey_budget_local_decisions_total',
    help: 'Budget decisions this instance took alone because the shared buckets (Redis or PostgreSQL) failed to answer',
    registers,
  });
  const { graphqlOperation, deprecatedUse } = operationCounters(registers);
  const graphqlErrors = new Counter({
    name: 'latchkey_graphql_errors_total',
    help: 'Errors in GraphQL responses over HTTP, by extensions.code as sent',
    labelNames: ['code'] as const,
    registers,
  });
  const auditDropped = new Counter({
    name: 'latchkey_audit_events_dropped_total',
    help: 'Security events the audit trail lost (its queue full, or the database not written); told later as one audit.dropped event',
    registers,
  });
  const deliveryLag = new Histogram({
    name: 'latchkey_event_delivery_lag_seconds',
    help: "Time from a document change to its delivery to this instance's subscribers",
    buckets: LAG_BUCKETS,
    registers,
  });

  scrapeGauges(sources, registers);

  const seenCodes = new Set<string>();

  return {
    registry,
    /** One finished (or abandoned) HTTP request. */
    observeHttp(route: string, status: number | 'aborted', seconds: number): void {
      http.observe(route, String(status), seconds);
    },
    /** The sign-in counters of one method. */
    signIn,
    /** A request refused by the rate limit `limit` (a name the server chose: `sign-in`, `token-generation`, a window's). */
    refused(limit: string): void {
      refusals.inc({ limit });
    },
    /** The budgets' refusals and what they admitted, by plan (`FREE`, `PRO`, `guest`). */
    budgets: {
      refused: (plan: string) => refusals.inc({ limit: 'api-budget', plan }),
      spent: (plan: string, points: number) => budgetSpent.inc({ plan }, points),
      decidedLocally: () => budgetLocal.inc(),
    },
    /** One GraphQL operation executed or subscribed (the name is an allowlisted one or `other`). */
    graphqlOperation,
    /** One use of a deprecated coordinate by a client (one the server chose: see use-deprecation-report.ts). */
    deprecatedUse,
    /** One error leaving in a GraphQL response, with its final code. */
    graphqlError(code: string | undefined): void {
      let label = code !== undefined && ERROR_CODE.test(code) ? code : 'other';
      if (!seenCodes.has(label)) {
        if (seenCodes.size >= MAX_ERROR_CODES) label = 'other';
        else seenCodes.add(label);
      }
      graphqlErrors.inc({ code: label });
    },
    /** Security events the audit trail lost. */
    auditDropped(count: number): void {
      auditDropped.inc(count);
    },
    /** One event delivered to this instance's subscribers `lagMs` after its change committed (the event bus calls it). */
    eventDelivered(lagMs: number): void {
      deliveryLag.observe(lagMs / 1000);
    },
  };
}

export type ServiceMetrics = ReturnType<typeof createServiceMetrics>;
