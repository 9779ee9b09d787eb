import { createServer, type Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { isDiscardingBody } from '@latchkey/http';
import type { Logger } from 'pino';
import type { Config } from './config/load.js';
import { listenFault } from './config/start-up-errors.js';
import type { HttpApp } from './server/app.js';
import { listen } from './server/listen.js';
import { refuseConnect } from './server/refuse-connect.js';
import { createTlsListener, listenTls } from './server/tls-listener.js';
import { createMetricsHandler } from './observability/metrics-listener.js';
import type { ServiceMetrics } from './observability/metrics.js';

/** The service's listeners (startService): HTTP, and HTTPS and metrics when configured. */

const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'The request headers are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request took too long to arrive.'],
};

/**
 * Requests node:http cannot parse never reach the app; answer them in the same JSON shape as every
 * other error (node's default is an empty 400/431), then close the connection. A connection discarding a refused
 * body (its request timed out meanwhile, say) has had its answer: it is only closed.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable || isDiscardingBody(socket)) {
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

type Timeouts = { requestTimeout: number; headersTimeout: number; keepAliveTimeout: number };

/** Stops accepting, closes idle connections, and cuts busy ones after 5 s. */
export const stopListening = (listener: Server | HttpsServer) =>
  new Promise<void>((resolve) => {
    listener.close(() => resolve());
    listener.closeIdleConnections();
    setTimeout(() => listener.closeAllConnections(), 5_000).unref();
  });

/** The listeners a started service has, with the base URL each listens on. */
export interface Listening {
  /** base URL actually listened on, e.g. http://127.0.0.1:4000 */
  url: string;
  server: Server;
  /** the HTTPS listener's base URL and server, when TLS_PORT is set */
  tlsUrl?: string;
  tlsServer?: HttpsServer;
  /** the metrics listener's base URL and server, when METRICS_PORT is set */
  metricsUrl?: string;
  metricsServer?: Server;
}

/** The HTTP listener (PORT). */
async function listenHttp(config: Config, app: HttpApp, timeouts: Timeouts): Promise<{ server: Server; url: string }> {
  const server = createServer(timeouts, app.handle);
  server.on('clientError', answerClientError);
  server.on('connect', refuseConnect);
  server.on('upgrade', app.upgrade);
  await new Promise<void>((resolve, reject) => {
    const refused = (error: unknown) => reject(listenFault(error, { setting: 'PORT', host: config.http.host, port: config.http.port }));
    server.once('error', refused);
    server.listen(config.http.port, config.http.host, () => {
      server.off('error', refused);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = config.http.host.includes(':') ? `[${config.http.host}]` : config.http.host;
  return { server, url: `http://${host === '0.0.0.0' ? 'localhost' : host}:${port}` };
}

/** The optional HTTPS listener (TLS_PORT): the same application, client certificates on /login/x509. */
async function listenHttps(
  config: Config,
  tls: NonNullable<Config['http']['tls']>,
  app: HttpApp,
  timeouts: Timeouts,
  server: Server,
  logger: Logger,
): Promise<{ tlsUrl: string; tlsServer: HttpsServer }> {
  const tlsServer = createTlsListener({ tls, handle: app.handle, onClientError: answerClientError, timeouts });
  tlsServer.on('upgrade', app.upgrade);
  let tlsUrl: string;
  try {
    tlsUrl = await listenTls(tlsServer, tls.port, config.http.host);
  } catch (error) {
    await stopListening(server);
    throw listenFault(error, { setting: 'TLS_PORT', host: config.http.host, port: tls.port });
  }
  logger.info({ url: tlsUrl, clientCertificates: tls.clientCa !== undefined }, `HTTPS listener on ${tlsUrl}`);
  return { tlsUrl, tlsServer };
}

/** The metrics listener (METRICS_PORT, on HOST): /metrics, /healthz and /readyz, nothing of the application. */
async function listenMetrics(
  config: Config,
  metrics: ServiceMetrics,
  app: HttpApp,
  timeouts: Timeouts,
  opened: (Server | HttpsServer)[],
  logger: Logger,
): Promise<{ metricsUrl: string; metricsServer: Server }> {
  const handle = createMetricsHandler({
    registry: metrics.registry,
    probes: app.probes,
    onError: (error) => logger.error({ err: error }, 'collecting metrics failed'),
  });
  const metricsServer = createServer(timeouts, handle);
  metricsServer.on('clientError', answerClientError);
  let metricsUrl: string;
  try {
    metricsUrl = await listen(metricsServer, config.observability.metricsPort!, config.http.host, 'http');
  } catch (error) {
    await Promise.all(opened.map(stopListening));
    throw listenFault(error, { setting: 'METRICS_PORT', host: config.http.host, port: config.observability.metricsPort! });
  }
  logger.info({ url: metricsUrl }, `metrics listener on ${metricsUrl}/metrics`);
  return { metricsUrl, metricsServer };
}

/** Every listener the configuration asks for; one that cannot listen closes those opened before it. */
export async function startListeners(
  config: Config,
  app: HttpApp,
  metrics: ServiceMetrics | undefined,
  logger: Logger,
): Promise<Listening> {
  const timeouts = { requestTimeout: 30_000, headersTimeout: 15_000, keepAliveTimeout: 5_000 };
  const { server, url } = await listenHttp(config, app, timeouts);
  const tls = config.http.tls ? await listenHttps(config, config.http.tls, app, timeouts, server, logger) : undefined;
  const opened = tls ? [server, tls.tlsServer] : [server];
  const observed = metrics ? await listenMetrics(config, metrics, app, timeouts, opened, logger) : undefined;
  return { url, server, ...tls, ...observed };
}
