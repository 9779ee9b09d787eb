import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { httpErrorBody } from '@latchkey/http';

/** Every method this server answers somewhere: what a CONNECT refusal names, since no resource here is a tunnel. */
const SERVED_METHODS = 'GET, HEAD, POST, DELETE, OPTIONS';
const CONNECT_REFUSAL = JSON.stringify(httpErrorBody(405, 'CONNECT is not supported: this server is no proxy.'));

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
