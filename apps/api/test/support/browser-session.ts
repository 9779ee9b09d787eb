import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Binds `port` on 127.0.0.1 (0: one the system picks) and lets it go again: the port bound, or null when taken. */
function tryPort(port: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(null) : reject(error),
    );
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * Where `freePort` looks: below the kernel's ephemeral range (Linux: 32768-60999), from which outgoing connections
 * take their local ports. A port the system hands out for `listen(0)` comes from that range, and between finding it
 * free and binding it an outgoing connection of any process may be given it (EADDRINUSE, seen in CI). Each test
 * worker (VITEST_POOL_ID) has a slice of its own, walked from a random start, so workers do not pick each other's
 * either. Null where the ephemeral range reaches that low: then the system picks.
 */
const PORT_SLICE = (() => {
  const lowest = 20_000;
  const size = 500;
  let ephemeralStart = 32_768;
  try {
    ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    // Not Linux: the IANA range (49152 and up) is above the slices too.
  }
  const slices = Math.floor((ephemeralStart - lowest) / size);
  if (!(slices >= 1)) return null;
  const worker = Number(process.env['VITEST_POOL_ID'] ?? process.pid);
  const first = lowest + (worker % slices) * size;
  return { first, size, next: Math.floor(Math.random() * size) };
})();

/** A free TCP port on 127.0.0.1 (the issuer URL must name the port the service will listen on). */
export async function freePort(): Promise<number> {
  if (PORT_SLICE) {
    for (let tries = 0; tries < PORT_SLICE.size; tries++) {
      const port = PORT_SLICE.first + (PORT_SLICE.next++ % PORT_SLICE.size);
      if ((await tryPort(port)) !== null) return port;
    }
  }
  const port = await tryPort(0);
  if (port === null) throw new Error('freePort: no port to listen on');
  return port;
}

/**
 * Starts something on a port `freePort` found, again on another if that port was taken in between (EADDRINUSE): the
 * port is free when it is found, but until the service binds it another process may bind it (or, where `freePort`
 * has to let the system pick, an outgoing connection be given it as its local port).
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (error) {
      if (attempt >= attempts || !String((error as Error)?.message ?? error).includes('EADDRINUSE')) throw error;
    }
  }
}

/** Applies one Set-Cookie line to a cookie jar (name -> value): set, or deleted when empty or expired. */
export function rememberCookie(cookies: Map<string, string>, line: string): void {
  const [pair, ...attributes] = line.split(';');
  const index = pair!.indexOf('=');
  const name = pair!.slice(0, index).trim();
  const value = pair!.slice(index + 1).trim();
  const expired = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute) || /^\s*expires=thu, 01 jan 1970/i.test(attribute));
  if (expired || value === '') cookies.delete(name);
  else cookies.set(name, value);
}

/**
 * One browser's cookies over plain fetch: follows nothing by itself (redirect: manual) so each hop of a login
 * can be inspected. Paths are ignored (every cookie goes everywhere), which only sends more, never less.
 */
export class BrowserSession {
  readonly cookies = new Map<string, string>();

  constructor(readonly base: string) {}

  async request(
    path: string,
    init: { method?: string; form?: Record<string, string>; json?: unknown; headers?: Record<string, string> } = {},
  ) {
    const url = path.startsWith('http') ? path : `${this.base}${path}`;
    const headers: Record<string, string> = { accept: 'text/html', ...init.headers };
    if (this.cookies.size > 0) headers['cookie'] = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers['origin'] ??= new URL(this.base).origin;
      body = new URLSearchParams(init.form).toString();
    } else if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    const response = await fetch(url, { method: init.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) rememberCookie(this.cookies, line);
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, location: response.headers.get('location') };
  }
}
