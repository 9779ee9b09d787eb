import postgres, { type Options, type Sql } from 'postgres';
import { createHealthMonitor, PROBE_INTERVAL_MS, type HealthMonitor } from './health.js';
import { createStatementGuard, type PoolStats } from './statement-guard.js';

/**
 * How long (seconds) a pooled connection waits before it connects again after `retries` failed connects: postgres-js's
 * own jittered exponential backoff (3^retries / 100 s, up to 20 s), capped at the health probe's interval. postgres-js
 * counts failures across the whole pool, so uncapped, an outage of a few seconds with readiness checks going on grew
 * the wait to 2-7 s (20 s after about ten failures), and the pool stayed in it after the database was back: /readyz and
 * the first query answered ~5 s after the server accepted connections again, while the probe (a fresh client) already
 * saw it up. During a known outage requests are refused without touching the pool, so a short wait costs nothing.
 */
export function reconnectBackoffSeconds(retries: number): number {
  const postgresJs = (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, 20);
  return Math.min(postgresJs, PROBE_INTERVAL_MS / 1000);
}

export interface ResilientPoolOptions {
  url: string;
  poolSize: number;
  /** DATABASE_TIMEOUT in milliseconds */
  timeoutMs: number;
}

/** The settings of every pooled connection: its limits and the server-side timeouts that release an abandoned transaction. */
function clientOptionsFor(poolSize: number, timeoutMs: number): Options<Record<string, never>> {
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  return {
    max: poolSize,
    connect_timeout: timeoutMs / 1000,
    backoff: reconnectBackoffSeconds,
    // Client-side TCP keepalive on idle connections (seconds).
    keep_alive: 10,
    onnotice: () => {},
    connection: {
      // The server ends a transaction left idle longer than any request may last, releasing its locks.
      idle_in_transaction_session_timeout: (seconds + 1) * 1000,
      // The server notices a vanished client within ~25 s instead of the kernel's two hours.
      tcp_keepalives_idle: 10,
      tcp_keepalives_interval: 5,
      tcp_keepalives_count: 3,
    },
  };
}

/**
 * The PostgreSQL pool of a service, built to come through database faults without a restart:
 * - every application statement is bounded by its request's deadline (see createStatementGuard);
 * - each connection asks the server for `idle_in_transaction_session_timeout` and TCP keepalives, so a
 *   transaction this side abandoned (deadline passed, connection cut) releases its locks on the server;
 * - when an outage becomes known, pending statements fail at once and the pool's connections are replaced
 *   (a connection stuck in a black hole would otherwise hold its slot until the kernel gives up, minutes later);
 * - LISTEN registrations are made again once the database is back;
 * - a connection that failed to connect tries again within the probe's interval (reconnectBackoffSeconds), so the pool
 *   answers as soon as the probe sees the database back.
 */
export function createResilientPool(options: ResilientPoolOptions) {
  const { url, poolSize, timeoutMs } = options;
  const clientOptions = clientOptionsFor(poolSize, timeoutMs);
  const open = (overrides: Partial<Options<Record<string, never>>> = {}): Sql => postgres(url, { ...clientOptions, ...overrides });

  let current = open();
  const listeners = new Set<{ channel: string; onPayload: (payload: string) => void; unlisten?: () => Promise<void> }>();

  const health: HealthMonitor = createHealthMonitor({
    probeTimeoutMs: Math.min(1000, timeoutMs),
    // A fresh connection each time: the pool's own may be stuck, and a probe must not wait behind them.
    async probe(probeTimeoutMs) {
      const client = open({ max: 1, connect_timeout: probeTimeoutMs / 1000, fetch_types: false });
      try {
        await client`select 1`;
      } finally {
        void client.end({ timeout: 0 }).catch(() => undefined);
      }
    },
    onOutage() {
      guard.rejectPending();
      const previous = current;
      current = open();
      // drizzle configured its parsers on the first client's options; the replacement needs them too.
      Object.assign(current.options.parsers, previous.options.parsers);
      Object.assign(current.options.serializers, previous.options.serializers);
      void previous.end({ timeout: 0 }).catch(() => undefined);
    },
  });
  const guard = createStatementGuard({ timeoutMs, health, poolSize });
  health.onChange((available) => {
    if (available) for (const registration of listeners) void relisten(registration);
  });

  async function relisten(registration: {
    channel: string;
    onPayload: (payload: string) => void;
    unlisten?: () => Promise<void>;
  }): Promise<void> {
    for (let attempt = 0; attempt < 10 && health.available && listeners.has(registration); attempt++) {
      try {
        const { unlisten } = await current.listen(registration.channel, registration.onPayload);
        registration.unlisten = unlisten;
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 500).unref());
      }
    }
  }

  /** The pool as drizzle sees it: always the current client, every statement guarded. */
  const switching = new Proxy(current, {
    apply: (_target, thisArg, args: unknown[]) => Reflect.apply(current, thisArg, args) as unknown,
    get: (_target, property) => Reflect.get(current, property) as unknown,
  });

  return {
    sql: guard.guardSql(switching),
    /** the pool with every statement bounded by `deadline` (a request's own view) */
    sqlUntil: (deadline: number) => guard.guardSql(switching, deadline),
    /** the pool for background work: every statement its own deadline, never a request's */
    sqlOfItsOwn: guard.guardSql(switching, 'own'),
    health,
    /** the client as it is now, unguarded (readiness ping) */
    current: () => current,
    /** a separate short-lived client on the same server (migrations: no deadline, may run long) */
    open,
    async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
      const registration: { channel: string; onPayload: (payload: string) => void; unlisten?: () => Promise<void> } = {
        channel,
        onPayload,
      };
      const { unlisten } = await current.listen(channel, onPayload);
      registration.unlisten = unlisten;
      listeners.add(registration);
      return async () => {
        listeners.delete(registration);
        // After an outage the listening connection may be one the pool has destroyed: it listens to nothing any more,
        // so its failure to send UNLISTEN leaves nothing to stop (and must not fail the service's shutdown).
        await registration.unlisten?.().catch(() => undefined);
      };
    },
    stats: (): PoolStats => guard.stats(),
    async end(timeoutSeconds: number): Promise<void> {
      health.close();
      guard.close();
      listeners.clear();
      await current.end({ timeout: timeoutSeconds });
    },
  };
}

export type ResilientPool = ReturnType<typeof createResilientPool>;
