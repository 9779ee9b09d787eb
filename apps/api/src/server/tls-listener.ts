import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Duplex } from 'node:stream';
import type { Config } from '../config/load.js';
import { refuseConnect } from './refuse-connect.js';
import { listen } from './listen.js';

export type TlsConfig = NonNullable<Config['http']['tls']>;

export interface TlsListenerOptions {
  tls: TlsConfig;
  /** the same request handler as the plain listener (`app.handle`) */
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** answers requests node cannot parse, as the plain listener does */
  onClientError: (error: NodeJS.ErrnoException, socket: Duplex) => void;
  /** the plain listener's timeouts */
  timeouts: { requestTimeout: number; headersTimeout: number; keepAliveTimeout: number };
}

/**
 * The optional HTTPS listener (TLS_PORT): the same application as the plain one, over TLS with the configured
 * certificate. With TLS_CLIENT_CA_FILE it asks every client for a certificate and verifies it against those
 * authorities, but lets the handshake succeed without one (`rejectUnauthorized: false`): the sign-in route reads
 * the verdict (`socket.authorized`) and answers a clear 401 instead of an aborted connection, and every other
 * route works as on the plain listener.
 */
export function createTlsListener({ tls, handle, onClientError, timeouts }: TlsListenerOptions): Server {
  const server = createServer(
    {
      cert: tls.cert,
      key: tls.key,
      minVersion: 'TLSv1.2',
      ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: false } : {}),
      ...timeouts,
    },
    handle,
  );
  server.on('clientError', onClientError);
  server.on('connect', refuseConnect);
  return server;
}

/** Listens on `host:port`; resolves with the listener's base URL (https://host:port). */
export function listenTls(server: Server, port: number, host: string): Promise<string> {
  return listen(server, port, host, 'https');
}
