import type { AddressInfo, Server } from 'node:net';

/** Listens on `host:port`; resolves with the listener's base URL (`scheme://host:port`, the port actually bound). */
export async function listen(server: Server, port: number, host: string, scheme: 'http' | 'https'): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  const name = host.includes(':') ? `[${host}]` : host;
  return `${scheme}://${name === '0.0.0.0' || name === '[::]' ? 'localhost' : name}:${actual}`;
}
