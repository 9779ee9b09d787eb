import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { RETRY_AFTER_SECONDS } from '@latchkey/db';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ErrorCode } from '../graphql/errors.js';

const GRAPHQL_RESPONSE = 'application/graphql-response+json';

/** The media type a transport error is written in: the one the client asked for, if it is one we speak. */
function mediaTypeFor(req: IncomingMessage): string {
  const accept = req.headers.accept ?? '';
  return accept.includes(GRAPHQL_RESPONSE) && !accept.includes('application/json') ? GRAPHQL_RESPONSE : 'application/json';
}

/** A request refused before GraphQL saw it, written as a GraphQL error envelope (no `data`). */
export function sendGraphQLRequestError(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ errors: [{ message, extensions: { code } }] });
  res.writeHead(status, {
    ...headers,
    'content-type': `${mediaTypeFor(req)}; charset=utf-8`,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}

/** JSON bodies of the non-GraphQL routes: `{statusCode, message, error}` (docs/endpoints.md). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    // A route may have chosen `private, no-store` already (authenticated answers); keep it.
    'cache-control': (res.getHeader('cache-control') as string | undefined) ?? 'no-store',
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export function sendHttpError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { statusCode: status, message, error: STATUS_CODES[status] ?? 'Error' }, headers);
}

/**
 * A data store this request needs (the database, the rate-limit counters) is down or did not answer in time:
 * 503 with Retry-After and the usual body with code SERVICE_UNAVAILABLE, never a 500.
 */
export function sendServiceUnavailable(res: ServerResponse, message = 'The service is unavailable. Try again shortly.'): void {
  sendJson(
    res,
    503,
    { statusCode: 503, message, error: 'Service Unavailable', code: 'SERVICE_UNAVAILABLE' },
    { 'retry-after': String(RETRY_AFTER_SECONDS) },
  );
}

/** Every method this server answers somewhere: what a CONNECT refusal names, since no resource here is a tunnel. */
const SERVED_METHODS = 'GET, HEAD, POST, DELETE, OPTIONS';
const CONNECT_REFUSAL = JSON.stringify({
  statusCode: 405,
  message: 'CONNECT is not supported: this server is no proxy.',
  error: 'Method Not Allowed',
});

/**
 * node:http hands a CONNECT request to its `connect` event, and without a listener drops the connection
 * unanswered. Answer 405 in the usual JSON shape and close. Whatever the client sends meanwhile is read and
 * discarded (unread bytes at close would turn it into a reset that can destroy the answer), for at most 5 s
 * of silence.
 */
export function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  socket.resume();
  (socket as Socket).setTimeout(5_000, () => socket.destroy());
  socket.end(
    `HTTP/1.1 405 Method Not Allowed\r\nallow: ${SERVED_METHODS}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(CONNECT_REFUSAL)}\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n${CONNECT_REFUSAL}`,
  );
}
