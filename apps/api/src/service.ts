import { purgeDpopProofUses, purgeSessionRecords, type DatabaseHandle } from '@latchkey/db';
import type { Logger } from 'pino';
import type { Config } from './config/load.js';
import { redisFault } from './config/start-up-errors.js';
import { join } from 'node:path';
import {
  createDevOutbox,
  createEndedSessions,
  createSignInLimits,
  createSmtpDelivery,
  createWebhookDelivery,
  purgeExpiredOidcModels,
  purgeExpiredOneTimeTokens,
  purgeExpiredSessionFactors,
  purgeExpiredSignInProgress,
  type DeliveryHandler,
} from '@latchkey/auth';
import { createEventRecorder } from './events/outbox.js';
import { startOutboxReader, type OutboxReader } from './events/outbox-reader.js';
import { createSubscriptionHub, type SubscriptionHub } from './events/subscription-hub.js';
import { createWakeChannel } from './events/wake.js';
import { createHttpApp, type HttpApp } from './server/app.js';
import { stopListening, type Listening } from './service-listeners.js';
import { prepareStart, type PreparedStart } from './start-up.js';
import { stopAccepting } from './server/stop-accepting.js';
import { openBudgetStore } from './budget/open-store.js';
import { createLogger } from './logger.js';
import { createServiceMetrics, type MetricSources, type ServiceMetrics } from './observability/metrics.js';
import { startTracing } from './observability/tracing.js';
import { startAuditService } from './observability/audit.js';
import type { AuditWriter } from '@latchkey/auth';

/** A started service: its listeners (the base URL each listens on), and what tests and shutdown reach. */
export interface RunningService extends Listening {
  app: HttpApp;
  /** this instance's subscriptions */
  subscriptions: SubscriptionHub;
  /** this instance's reader of the event outbox (its position and reads: diagnostics, tests) */
  outbox: Pick<OutboxReader, 'position' | 'reads'>;
  database: DatabaseHandle;
  logger: Logger;
  /** the audit trail's writer (tests wait for it with `settled()`); record events through `app.audit` */
  auditWriter: AuditWriter;
  /**
   * Graceful shutdown (SIGTERM, SIGINT): /readyz answers 503 at once on every listener; the
   * listeners keep accepting for `delayMs` (a load balancer sees the 503 and moves away), then stop; every
   * response closes its connection; subscriptions end (SSE streams complete, WebSockets get 1001); requests in
   * flight finish; idle keep-alive connections end after their keep-alive timeout or as the deadline nears.
   * Resolves within `timeoutMs`; true when nothing had to be cut.
   */
  shutdown(plan: { delayMs: number; timeoutMs: number }): Promise<boolean>;
  /** Stops at once (tests): idle connections are closed, busy ones cut after 5 s. */
  close(): Promise<void>;
}

/**
 * Where one-time tokens go: SMTP when SMTP_URL is set, else the signed webhook when DELIVERY_WEBHOOK_URL is,
 * else the development outbox (refused in production).
 * A production server with neither says so for every message it drops.
 */
function deliveryFor(config: Config, logger: Logger): DeliveryHandler {
  if (config.auth.smtpUrl) return createSmtpDelivery({ url: config.auth.smtpUrl, from: config.auth.mailFrom });
  if (config.auth.webhook) return createWebhookDelivery(config.auth.webhook);
  if (config.env !== 'production') return createDevOutbox({ dir: join(config.dataDir, 'outbox'), production: false });
  return {
    name: 'none',
    async deliver(message) {
      logger.warn({ to: message.to }, 'no delivery handler is configured: a sign-in message was dropped');
    },
  };
}

/** What only tests set: seams into the service's own clocks. */
export interface StartServiceOptions {
  /**
   * The clock of the ended-sessions list (how old its last good read is): a test moves it to
   * prove the 5 s rule over HTTP without waiting 5 s of a loaded machine's time. @default Date.now
   */
  endedSessionsClock?: () => number;
  /**
   * The listeners bound, the keys loaded and the database opened and prepared (`main` does this before it loads the
   * rest of the service: see start-up.ts); startService does it itself, first, when they are not given.
   */
  prepared?: PreparedStart;
}

/** Shared counters whenever instances can share them (several instances must share their counters): Redis, else PostgreSQL, else memory. */
function startSignInLimits(config: Config, database: DatabaseHandle) {
  return createSignInLimits({
    store: config.redisUrl
      ? { kind: 'redis', url: config.redisUrl, timeoutMs: config.database.timeoutMs }
      : config.database.url
        ? { kind: 'postgres', url: config.database.url, timeoutMs: config.database.timeoutMs, available: () => database.health.available }
        : { kind: 'memory' },
  });
}

/** Expired one-time tokens and provider artifacts are invisible at once; this only reclaims the rows. Returns the release. */
function startPurgingExpiredRecords(database: DatabaseHandle, logger: Logger): () => Promise<void> {
  const purge = setInterval(() => {
    void Promise.all([
      purgeExpiredOneTimeTokens(database.db),
      purgeExpiredOidcModels(database.db),
      purgeExpiredSignInProgress(database.db),
      purgeExpiredSessionFactors(database.db),
      purgeSessionRecords(database.db),
      purgeDpopProofUses(database.db),
    ]).catch((error: unknown) => logger.warn({ err: error }, 'purging expired login records failed'));
  }, 10 * 60_000);
  purge.unref();
  return async () => clearInterval(purge);
}

/** What the gauges read at each scrape; set once what they count exists. */
type GaugeSources = Pick<MetricSources, 'openSubscriptions' | 'webSocketConnections'>;

/** Metrics (METRICS_PORT): gauges read their sources at each scrape. */
function serviceMetricsFor(config: Config, database: DatabaseHandle, sources: GaugeSources): ServiceMetrics | undefined {
  return config.observability.metricsPort === undefined
    ? undefined
    : createServiceMetrics({
        database: database.kind,
        poolStats: () => database.poolStats(),
        openSubscriptions: () => sources.openSubscriptions(),
        webSocketConnections: () => sources.webSocketConnections(),
      });
}

/**
 * Subscriptions: every change writes its event to the outbox table in its own transaction; each instance
 * reads the table (woken by NOTIFY or Redis, or by its poll) and delivers to its own subscribers.
 */
async function startEvents(
  config: Config,
  database: DatabaseHandle,
  logger: Logger,
  metrics: ServiceMetrics | undefined,
  resources: (() => Promise<void>)[],
) {
  const wake = await createWakeChannel(config, database, logger, { listen: true }).catch((error: unknown) => {
    throw redisFault(error, config.redisUrl);
  });
  resources.push(() => wake.close());
  const outbox = await startOutboxReader({
    database,
    wake,
    retentionSeconds: config.subscriptions.eventRetentionSeconds,
    logger,
    onDelivered: metrics?.eventDelivered,
  });
  resources.push(() => outbox.close());
  const events = createEventRecorder(wake, outbox.wake);
  const subscriptions = createSubscriptionHub({
    source: outbox,
    maxPerUser: config.subscriptions.perUser,
    maxQueuedEvents: config.subscriptions.queueSize,
  });
  resources.push(() => subscriptions.close());
  return { outbox, events, subscriptions };
}

/** Sessions ended on any instance, read every second: a token issued under one is refused. */
async function startEndedSessions(database: DatabaseHandle, logger: Logger, clock: StartServiceOptions['endedSessionsClock']) {
  const endedSessions = createEndedSessions({
    db: database.background,
    now: clock,
    onRefreshFailed: (error) =>
      logger.warn({ err: error }, 'reading the ended sessions failed: tokens bound to a session are refused until it succeeds'),
  });
  await endedSessions.start();
  return endedSessions;
}

/** `close` (at once: tests) and `shutdown` (graceful, within its deadline); whichever is called first is the one that runs. */
function wireShutdown(
  app: HttpApp,
  subscriptions: SubscriptionHub,
  { server, tlsServer, metricsServer }: Listening,
  releaseAll: () => Promise<void>,
) {
  const listeners = tlsServer ? [server, tlsServer] : [server];
  let closing: Promise<unknown> | undefined;
  const close = async () => {
    await (closing ??= (async () => {
      // Open streams first (subscriptions end, sockets close), so the listeners have nothing long-lived to wait for.
      await subscriptions.close();
      await app.closeWebSockets();
      await Promise.all([...listeners, ...(metricsServer ? [metricsServer] : [])].map(stopListening));
      await releaseAll();
    })());
  };
  const shutdown = ({ delayMs, timeoutMs }: { delayMs: number; timeoutMs: number }) =>
    (closing ??= (async () => {
      const startedAt = performance.now();
      const at = (ms: number) => Math.max(0, startedAt + ms - performance.now());
      app.drain();
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const drained = Promise.all(listeners.map(stopAccepting));
      await subscriptions.close();
      await app.closeWebSockets();
      // As the deadline nears: idle connections first, then whatever is left (and sockets deaf to 1001).
      let cut = false;
      const nearing = setTimeout(
        () => {
          for (const listener of listeners) listener.closeIdleConnections();
        },
        at(timeoutMs - Math.min(2000, timeoutMs / 4)),
      );
      const last = setTimeout(
        () => {
          cut = true;
          app.terminateWebSockets();
          for (const listener of listeners) listener.closeAllConnections();
        },
        at(timeoutMs - Math.min(1000, timeoutMs / 8)),
      );
      await drained;
      clearTimeout(nearing);
      clearTimeout(last);
      // The metrics listener answered scrapes (and /readyz 503) throughout; it goes last.
      if (metricsServer) await stopListening(metricsServer);
      // What is left of the budget bounds the release (a pool that lost its server may not end by itself).
      // (main's backstop exits at the deadline itself: leave it a moment to exit cleanly first.)
      const released = await Promise.race([
        releaseAll().then(() => true),
        new Promise<false>((resolve) => setTimeout(resolve, at(timeoutMs - 250), false)),
      ]);
      return !cut && released;
    })()) as Promise<boolean>;
  return { close, shutdown };
}

/**
 * Listens (answering "starting"), loads keys, opens the database, applies migrations (start-up.ts), then builds the
 * application and serves: whatever needs no database is checked before it opens. Used by `main` and by the tests alike.
 */
export async function startService(
  config: Config,
  logger: Logger = createLogger(config.logLevel, { env: config.env }),
  options: StartServiceOptions = {},
): Promise<RunningService> {
  const { listeners: bound, keys, database } = options.prepared ?? (await prepareStart(config, logger));
  /** what else holds connections, released before the database on close */
  const resources: (() => Promise<void>)[] = [];
  try {
    const limits = await startSignInLimits(config, database).catch((error: unknown) => {
      throw redisFault(error, config.redisUrl);
    });
    resources.push(() => limits.close());
    resources.push(startPurgingExpiredRecords(database, logger));
    const gauges: GaugeSources = { openSubscriptions: () => 0, webSocketConnections: () => 0 };
    const metrics = serviceMetricsFor(config, database, gauges);
    // The audit trail: its writer is closed (what is queued written, a last checkpoint logged) before the database.
    const audit = startAuditService({ database, keys, retentionSeconds: config.audit.retentionSeconds, logger, metrics });
    resources.push(() => audit.close());
    const { outbox, events, subscriptions } = await startEvents(config, database, logger, metrics, resources);
    gauges.openSubscriptions = () => subscriptions.size();
    // Traces (OTEL_EXPORTER_OTLP_ENDPOINT): flushed after everything else has closed.
    const tracing = config.observability.tracing ? await startTracing(config.observability.tracing, logger) : undefined;
    if (tracing) resources.unshift(() => tracing.shutdown());
    const endedSessions = await startEndedSessions(database, logger, options.endedSessionsClock);
    resources.push(async () => endedSessions.stop());
    const budgets = config.budget.enabled
      ? await openBudgetStore({ config, database, logger, decidedLocally: metrics?.budgets.decidedLocally }).catch((error: unknown) => {
          throw redisFault(error, config.redisUrl);
        })
      : undefined;
    if (budgets) resources.push(() => budgets.close());
    const app = await createHttpApp({
      config,
      logger,
      database,
      keys,
      delivery: deliveryFor(config, logger),
      signInLimits: limits,
      subscriptions,
      events,
      metrics,
      auditWriter: audit.writer,
      tracing: tracing?.plugin,
      endedSessions,
      ...(budgets ? { budgetStore: budgets.store } : {}),
    });
    gauges.webSocketConnections = app.webSocketClients;
    bound.serve(app, metrics, logger);
    const { serve: _serve, close: _close, ...listening } = bound;
    const releaseAll = async () => {
      app.stopAuditingDenials();
      await app.yoga.dispose();
      for (const release of resources.reverse()) await release();
      await database.close();
    };
    const { close, shutdown } = wireShutdown(app, subscriptions, listening, releaseAll);
    return {
      ...listening,
      app,
      subscriptions,
      outbox,
      database,
      logger,
      auditWriter: audit.writer,
      shutdown,
      close,
    };
  } catch (error) {
    await bound.close();
    for (const release of resources.reverse()) await release().catch(() => undefined);
    await database.close();
    throw error;
  }
}
