import { createServer, type Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { isDiscardingBody } from '@latchkey/http';
import type { Logger } from 'pino';
import type { Config } from './config/load.js';
import { listenFault } from './config/start-up-errors.js';
import type { HttpApp } from './server/app.js';
import { answerWhileStarting, refuseUpgradeWhileStarting } from './server/starting.js';
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

/** The HTTP listener (PORT), answering "starting" until it is served. */
async function listenHttp(config: Config, timeouts: Timeouts): Promise<{ server: Server; url: string }> {
  const server = createServer(timeouts, answerWhileStarting);
  server.on('clientError', answerClientError);
  server.on('connect', refuseConnect);
  server.on('upgrade', refuseUpgradeWhileStarting);
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
  timeouts: Timeouts,
): Promise<{ tlsUrl: string; tlsServer: HttpsServer }> {
  const tlsServer = createTlsListener({ tls, handle: answerWhileStarting, onClientError: answerClientError, timeouts });
  tlsServer.on('upgrade', refuseUpgradeWhileStarting);
  try {
    return { tlsUrl: await listenTls(tlsServer, tls.port, config.http.host), tlsServer };
  } catch (error) {
    throw listenFault(error, { setting: 'TLS_PORT', host: config.http.host, port: tls.port });
  }
}

/** The metrics listener (METRICS_PORT, on HOST): /metrics, /healthz and /readyz, nothing of the application. */
async function listenMetrics(config: Config, port: number, timeouts: Timeouts): Promise<{ metricsUrl: string; metricsServer: Server }> {
  const metricsServer = createServer(timeouts, answerWhileStarting);
  metricsServer.on('clientError', answerClientError);
  try {
    return { metricsUrl: await listen(metricsServer, port, config.http.host, 'http'), metricsServer };
  } catch (error) {
    throw listenFault(error, { setting: 'METRICS_PORT', host: config.http.host, port });
  }
}

/**
 * The listeners, bound before anything else starts: they hold their ports from the first moment (a port in use is
 * said before any database work) and answer as a service still starting (answerWhileStarting) until `serve`.
 */
export interface BoundListeners extends Listening {
  /** Hands the listeners to the application (and the metrics listener to the metrics), and says where each listens. */
  serve(app: HttpApp, metrics: ServiceMetrics | undefined, logger: Logger): void;
  /** Stops them (start-up failed after they were bound). */
  close(): Promise<void>;
}

/** Every listener the configuration asks for; one that cannot listen closes those opened before it. */
export async function bindListeners(config: Config): Promise<BoundListeners> {
  const timeouts = { requestTimeout: 30_000, headersTimeout: 15_000, keepAliveTimeout: 5_000 };
  const { server, url } = await listenHttp(config, timeouts);
  const opened: (Server | HttpsServer)[] = [server];
  try {
    const tls = config.http.tls ? await listenHttps(config, config.http.tls, timeouts) : undefined;
    if (tls) opened.push(tls.tlsServer);
    const { metricsPort } = config.observability;
    const observed = metricsPort === undefined ? undefined : await listenMetrics(config, metricsPort, timeouts);
    if (observed) opened.push(observed.metricsServer);
    const listening: Listening = { url, server, ...tls, ...observed };
    return {
      ...listening,
      serve(app, metrics, logger) {
        const listeners = listening.tlsServer ? [server, listening.tlsServer] : [server];
        for (const listener of listeners) {
          listener.off('request', answerWhileStarting).on('request', app.handle);
          listener.off('upgrade', refuseUpgradeWhileStarting).on('upgrade', app.upgrade);
        }
        if (listening.tlsUrl)
          logger.info(
            { url: listening.tlsUrl, clientCertificates: config.http.tls?.clientCa !== undefined },
            `HTTPS listener on ${listening.tlsUrl}`,
          );
        if (listening.metricsServer && metrics) {
          const handle = createMetricsHandler({
            registry: metrics.registry,
            probes: app.probes,
            onError: (error) => logger.error({ err: error }, 'collecting metrics failed'),
          });
          listening.metricsServer.off('request', answerWhileStarting).on('request', handle);
          logger.info({ url: listening.metricsUrl }, `metrics listener on ${listening.metricsUrl}/metrics`);
        }
      },
      close: async () => {
        await Promise.all(opened.map(stopListening));
      },
    };
  } catch (error) {
    await Promise.all(opened.map(stopListening));
    throw error;
  }
}
