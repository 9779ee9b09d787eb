import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { sendGraphQLRequestError, sendJson, sendServiceUnavailable } from '@latchkey/http';

// The listeners are bound before the database opens (a port in use is said at once, before any database work):
// until the application is ready they answer every request here. The process is up (/healthz 200); it is not ready
// (/readyz 503), and every other request is refused for now, as during a database outage: 503 with Retry-After.

const STARTING = 'The service is starting. Try again shortly.';
/** a second: start-up takes seconds (migrations; the embedded database's first creation about ten) */
const RETRY_AFTER_SECONDS = 1;

const pathOf = (url: string) => {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
};

/** A request to a listener of a service still starting: /healthz 200, anything else 503 with Retry-After. */
export function answerWhileStarting(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('x-content-type-options', 'nosniff');
  const path = pathOf(req.url ?? '/');
  if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
  if (path === '/graphql')
    return sendGraphQLRequestError(req, res, 503, 'SERVICE_UNAVAILABLE', STARTING, { 'retry-after': String(RETRY_AFTER_SECONDS) });
  sendServiceUnavailable(res, RETRY_AFTER_SECONDS, STARTING);
}

/** An HTTP upgrade (graphql-ws) before the service is ready: 503 and close. */
export function refuseUpgradeWhileStarting(_req: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  socket.end(`HTTP/1.1 503 Service Unavailable\r\nretry-after: ${RETRY_AFTER_SECONDS}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
}
