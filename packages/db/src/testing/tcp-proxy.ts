import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * Tests only: a TCP proxy in front of a real server (PostgreSQL, or an api instance) that can make it fail the
 * two ways networks fail, without touching the server itself:
 *
 * - `drop()`: the server is gone (stopped, restarted): open connections are reset and new ones refused.
 * - `blackhole()`: a partition: packets get no answer. Open connections stop carrying data in both directions
 *   and new connections are accepted but never reach the server. `restore()` after a black hole lets what was
 *   held flow on, as TCP would after a short partition (a client that gave up meanwhile closes its side).
 *
 * `restore()` ends either fault, on the same port.
 */
export interface TcpProxy {
  /** the port the proxy listens on (127.0.0.1) */
  readonly port: number;
  /** `url` (postgres://..., http://...) with its host and port pointed at the proxy */
  routeUrl(url: string): string;
  drop(): Promise<void>;
  blackhole(): void;
  restore(): Promise<void>;
  /** what the proxy is doing now */
  readonly state: 'forwarding' | 'dropped' | 'blackholed';
  /** client connections currently open through the proxy */
  connections(): number;
  /** drops everything and stops listening for good */
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket | undefined;
  /** chunks held while black-holed, per direction */
  toUpstream: Buffer[];
  toClient: Buffer[];
  /** the client closed while black-holed: end upstream once the held data is through */
  clientEnded: boolean;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let server: Server | undefined;
  let port = 0;
  let state: TcpProxy['state'] = 'forwarding';

  function discard(pair: Pair): void {
    pairs.delete(pair);
    pair.client.destroy();
    pair.upstream?.destroy();
  }

  function connectUpstream(pair: Pair): void {
    const upstream = connect(targetPort, targetHost);
    pair.upstream = upstream;
    upstream.on('error', () => discard(pair));
    upstream.on('close', () => {
      if (state === 'blackholed') return; // the close is "in flight" too; it lands when the partition ends
      discard(pair);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (state === 'blackholed') pair.toClient.push(chunk);
      else pair.client.write(chunk);
    });
    flush(pair);
  }

  function flush(pair: Pair): void {
    if (!pair.upstream) return;
    for (const chunk of pair.toUpstream.splice(0)) pair.upstream.write(chunk);
    for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk);
    if (pair.clientEnded) {
      pair.upstream.end();
      pairs.delete(pair);
    } else if (pair.upstream.destroyed) {
      pair.client.end();
      pairs.delete(pair);
    }
  }

  function accept(client: Socket): void {
    const pair: Pair = { client, upstream: undefined, toUpstream: [], toClient: [], clientEnded: false };
    pairs.add(pair);
    client.on('error', () => undefined);
    client.on('data', (chunk: Buffer) => {
      if (state === 'blackholed' || !pair.upstream) pair.toUpstream.push(chunk);
      else pair.upstream.write(chunk);
    });
    client.on('close', () => {
      if (state === 'blackholed') {
        pair.clientEnded = true;
        return;
      }
      discard(pair);
    });
    if (state === 'forwarding') connectUpstream(pair);
  }

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer(accept);
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        next.off('error', reject);
        port = (next.address() as { port: number }).port;
        server = next;
        resolve();
      });
    });

  const stopListening = () =>
    new Promise<void>((resolve) => {
      const current = server;
      server = undefined;
      if (!current) return resolve();
      current.close(() => resolve());
    });

  await listen();
  return {
    get port() {
      return port;
    },
    get state() {
      return state;
    },
    routeUrl(url: string): string {
      const routed = new URL(url);
      routed.hostname = '127.0.0.1';
      routed.port = String(port);
      return routed.toString();
    },
    async drop() {
      state = 'dropped';
      for (const pair of [...pairs]) {
        pairs.delete(pair);
        // An RST, as a server process that died would leave behind (not a polite FIN).
        pair.client.resetAndDestroy();
        pair.upstream?.destroy();
      }
      await stopListening();
    },
    blackhole() {
      state = 'blackholed';
    },
    async restore() {
      const was = state;
      state = 'forwarding';
      if (was === 'dropped') await listen();
      for (const pair of [...pairs]) {
        if (!pair.upstream) {
          if (pair.clientEnded) pairs.delete(pair);
          else connectUpstream(pair);
        } else {
          flush(pair);
        }
      }
    },
    connections: () => pairs.size,
    async close() {
      state = 'dropped';
      for (const pair of [...pairs]) discard(pair);
      await stopListening();
    },
  };
}
