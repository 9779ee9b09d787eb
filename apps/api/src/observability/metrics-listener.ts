import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { pathOf } from '../server/request-observer.js';
import { sendHttpError } from '@latchkey/http';

export interface MetricsListenerOptions {
  registry: Registry;
  /** the main listener's own `/healthz` and `/readyz` answers */
  probes: { health(res: ServerResponse): void; readiness(res: ServerResponse): Promise<void> };
  /** told when collecting fails (the scrape gets a 500 that names nothing) */
  onError: (error: unknown) => void;
}

/**
 * The request handler of the metrics listener (METRICS_PORT): `/metrics` in Prometheus' text format, the same
 * `/healthz` and `/readyz` as the main listener, 404 for anything else. Only GET and HEAD.
 */
export function createMetricsHandler({ registry, probes, onError }: MetricsListenerOptions) {
  async function sendMetrics(res: ServerResponse): Promise<void> {
    try {
      const text = await registry.metrics();
      res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
      res.end(text);
    } catch (error) {
      onError(error);
      if (!res.headersSent) sendHttpError(res, 500, 'Collecting the metrics failed.');
    }
  }

  return function handle(req: IncomingMessage, res: ServerResponse): void {
    res.setHeader('x-content-type-options', 'nosniff');
    const path = pathOf(req.url ?? '/');
    if (path !== '/metrics' && path !== '/healthz' && path !== '/readyz') return sendHttpError(res, 404, 'Not Found');
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendHttpError(res, 405, 'Method Not Allowed', { allow: 'GET, HEAD' });
    if (path === '/metrics') return void sendMetrics(res);
    if (path === '/healthz') return probes.health(res);
    void probes.readiness(res);
  };
}
