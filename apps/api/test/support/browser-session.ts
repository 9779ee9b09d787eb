import { createServer } from 'node:net';

/** A free TCP port on 127.0.0.1 (the issuer URL must name the port the service will listen on). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts something on a port `freePort` found, again on another if that port was taken in between (EADDRINUSE): the
 * port is free when it is found, but until the service binds it an outgoing connection of any process (tests run in
 * parallel) may be given it as its own local port.
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
