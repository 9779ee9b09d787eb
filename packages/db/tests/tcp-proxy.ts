import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * Minimal TCP forwarder used to make PostgreSQL "unreachable" on demand without
 * touching the real server: stop() refuses new connections and kills live ones,
 * start() listens again on the same port.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  /** When true, connections are accepted but never forwarded (a blackholed server). */
  blackhole = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    const server = createServer((client) => this.onClient(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address && typeof address === 'object') this.port = address.port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private onClient(client: Socket): void {
    this.track(client);
    if (this.blackhole) return;
    const upstream = createConnection(this.targetPort, this.targetHost);
    this.track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => {}); // resets are expected when we kill the link
    socket.on('close', () => this.sockets.delete(socket));
  }
}
