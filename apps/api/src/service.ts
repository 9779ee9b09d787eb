import { createServer, type Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { createDatabase, isEmpty, runMigrations, seedDemoData, type DatabaseHandle } from '@latchkey/db';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { join } from 'node:path';
import {
  createDevOutbox,
  createLoginLimits,
  createSmtpDelivery,
  createWebhookDelivery,
  purgeExpiredOidcModels,
  purgeExpiredOneTimeTokens,
  purgeExpiredSessionFactors,
  purgeExpiredSignInProgress,
  type DeliveryHandler,
} from '@latchkey/auth';
import { createEventBus } from './events/create-bus.js';
import { createSubscriptionHub, type SubscriptionHub } from './events/subscription-hub.js';
import { createHttpApp, type HttpApp } from './http/app.js';
import { listen } from './http/listen.js';
import { createTlsListener, listenTls } from './http/tls-listener.js';
import { loadKeyMaterial } from './keys/key-material.js';
import { createLogger } from './logger.js';
import { createServiceMetrics } from './observability/metrics.js';
import { createMetricsHandler } from './observability/metrics-listener.js';
import { startTracing } from './observability/tracing.js';

export interface RunningService {
  /** base URL actually listened on, e.g. http://127.0.0.1:4000 */
  url: string;
  server: Server;
  /** the HTTPS listener's base URL and server, when TLS_PORT is set */
  tlsUrl?: string;
  tlsServer?: HttpsServer;
  /** the metrics listener's base URL and server, when METRICS_PORT is set */
  metricsUrl?: string;
  metricsServer?: Server;
  app: HttpApp;
  /** this instance's subscriptions */
  subscriptions: SubscriptionHub;
  database: DatabaseHandle;
  logger: Logger;
  close(): Promise<void>;
}

const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'The request headers are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request took too long to arrive.'],
};

/**
 * Requests node:http cannot parse never reach the app; answer them in the same JSON shape as every
 * other error (node's default is an empty 400/431), then close the connection.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'Bad Request', 'The request could not be parsed.'];
  const body = JSON.stringify({ statusCode: status, message, error: reason });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
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

/** Opens the database, applies migrations, loads keys, and listens. Used by `main` and by the tests alike. */
export async function startService(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<RunningService> {
  // Keys first: a bad key is a configuration error and must not wait for (or hide behind) the database.
  const keys = await loadKeyMaterial({
    signingKey: config.keys.signingKey,
    verifyKeys: config.keys.verifyKeys,
    dataDir: config.dataDir,
    production: config.env === 'production',
  });
  const database = await createDatabase({ url: config.database.url, dataDir: config.dataDir, poolSize: config.database.poolSize });
  /** what else holds connections, released before the database on close */
  const resources: (() => Promise<void>)[] = [];
  try {
    await runMigrations(database);
    // `pnpm start` on a fresh development database comes up with the demo data of DESIGN.md.
    if (config.env === 'development' && (await isEmpty(database))) {
      const seeded = await seedDemoData(database);
      logger.info({ ...seeded }, 'seeded demo data into the empty development database');
    }
    // Shared counters whenever instances can share them (DESIGN.md Scale-out): Redis, else PostgreSQL, else memory.
    const limits = await createLoginLimits({
      store: config.redisUrl ? { kind: 'redis', url: config.redisUrl } : config.database.url ? { kind: 'postgres', url: config.database.url } : { kind: 'memory' },
    });
    resources.push(() => limits.close());
    // Expired one-time tokens and provider artifacts are invisible at once; this only reclaims the rows.
    const purge = setInterval(() => {
      void Promise.all([
        purgeExpiredOneTimeTokens(database.db),
        purgeExpiredOidcModels(database.db),
        purgeExpiredSignInProgress(database.db),
        purgeExpiredSessionFactors(database.db),
      ]).catch((error: unknown) =>
        logger.warn({ err: error }, 'purging expired login records failed'),
      );
    }, 10 * 60_000);
    purge.unref();
    resources.push(async () => clearInterval(purge));
    // Subscriptions: events travel between instances on the bus; each instance delivers to its own subscribers.
    const bus = await createEventBus(config, database, logger);
    resources.push(() => bus.close());
    const subscriptions = createSubscriptionHub({
      bus,
      maxPerUser: config.subscriptions.perUser,
      maxQueuedEvents: config.subscriptions.queueSize,
      onPublishError: (error) => logger.error({ err: error }, 'publishing a document event failed'),
    });
    resources.push(() => subscriptions.close());
    // Metrics (METRICS_PORT): gauges read their sources at each scrape.
    let webSocketConnections = () => 0;
    const metrics =
      config.observability.metricsPort === undefined
        ? undefined
        : createServiceMetrics({
            database: database.kind,
            // The database client reports no pool statistics yet: the pool gauges stay absent until it does.
            poolStats: () => undefined,
            openSubscriptions: () => subscriptions.size(),
            webSocketConnections: () => webSocketConnections(),
          });
    // Traces (OTEL_EXPORTER_OTLP_ENDPOINT): flushed after everything else has closed.
    const tracing = config.observability.tracing ? startTracing(config.observability.tracing, logger) : undefined;
    if (tracing) resources.unshift(() => tracing.shutdown());
    const app = await createHttpApp({ config, logger, database, keys, delivery: deliveryFor(config, logger), loginLimits: limits, subscriptions, metrics, tracing: tracing?.plugin });
    webSocketConnections = app.webSocketClients;
    const timeouts = { requestTimeout: 30_000, headersTimeout: 15_000, keepAliveTimeout: 5_000 };
    const server = createServer(timeouts, app.handle);
    server.on('clientError', answerClientError);
    server.on('upgrade', app.upgrade);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.http.port, config.http.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const host = config.http.host.includes(':') ? `[${config.http.host}]` : config.http.host;
    const url = `http://${host === '0.0.0.0' ? 'localhost' : host}:${port}`;
    const stopListening = (listener: Server | HttpsServer) =>
      new Promise<void>((resolve) => {
        listener.close(() => resolve());
        listener.closeIdleConnections();
        setTimeout(() => listener.closeAllConnections(), 5_000).unref();
      });
    // The optional HTTPS listener (TLS_PORT): the same application, client certificates on /login/x509.
    let tlsServer: HttpsServer | undefined;
    let tlsUrl: string | undefined;
    if (config.http.tls) {
      tlsServer = createTlsListener({ tls: config.http.tls, handle: app.handle, onClientError: answerClientError, timeouts });
      tlsServer.on('upgrade', app.upgrade);
      try {
        tlsUrl = await listenTls(tlsServer, config.http.tls.port, config.http.host);
      } catch (error) {
        await stopListening(server);
        throw error;
      }
      logger.info({ url: tlsUrl, clientCertificates: config.http.tls.clientCa !== undefined }, `HTTPS listener on ${tlsUrl}`);
    }
    // The metrics listener (METRICS_PORT, on HOST): /metrics, /healthz and /readyz, nothing of the application.
    let metricsServer: Server | undefined;
    let metricsUrl: string | undefined;
    if (metrics) {
      const handle = createMetricsHandler({ registry: metrics.registry, probes: app.probes, onError: (error) => logger.error({ err: error }, 'collecting metrics failed') });
      metricsServer = createServer(timeouts, handle);
      metricsServer.on('clientError', answerClientError);
      try {
        metricsUrl = await listen(metricsServer, config.observability.metricsPort!, config.http.host, 'http');
      } catch (error) {
        await Promise.all([stopListening(server), ...(tlsServer ? [stopListening(tlsServer)] : [])]);
        throw error;
      }
      logger.info({ url: metricsUrl }, `metrics listener on ${metricsUrl}/metrics`);
    }
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        // Open streams first (subscriptions end, sockets close), so the listeners have nothing long-lived to wait for.
        await subscriptions.close();
        await app.closeWebSockets();
        await Promise.all([stopListening(server), ...(tlsServer ? [stopListening(tlsServer)] : []), ...(metricsServer ? [stopListening(metricsServer)] : [])]);
        await app.yoga.dispose();
        for (const release of resources.reverse()) await release();
        await database.close();
      })());
    return { url, server, ...(tlsServer ? { tlsUrl, tlsServer } : {}), ...(metricsServer ? { metricsUrl, metricsServer } : {}), app, subscriptions, database, logger, close };
  } catch (error) {
    for (const release of resources.reverse()) await release().catch(() => undefined);
    await database.close();
    throw error;
  }
}
