import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rememberCookie } from './browser-session.js';

/** An answer, read whole. */
export interface NodeAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** the Set-Cookie lines as sent, attributes included */
  setCookies: string[];
  text: string;
  /** the parsed body, when it is JSON */
  json: any;
  location: string | undefined;
}

export interface NodeRequestInit {
  method?: string;
  form?: Record<string, string>;
  json?: unknown;
  /** a body sent as it is (give its content-type and origin in `headers`) */
  body?: string;
  headers?: Record<string, string>;
  /** the local address to send from (127.0.0.0/8 is all loopback: one address per simulated client) */
  from?: string;
  /** the client certificate this request presents (https only) */
  cert?: { cert: string; key: string };
}

export interface NodeBrowserOptions {
  /** where to connect (default: the host and port of the URL); the URL's stays the Host and Origin */
  connectTo?: { host: string; port?: number };
  /** the local address every request is sent from, unless a request names another */
  from?: string;
  /** the authority that signed the server's certificate (https) */
  ca?: string;
}

/**
 * One browser's cookie jar over node:http(s), which, unlike fetch, can send from a chosen local address, trust a
 * test authority and send any Host header. Redirects are not followed, so each hop can be inspected; cookie paths
 * are ignored (every cookie goes everywhere), which only sends more, never less.
 */
export class NodeBrowser {
  readonly cookies = new Map<string, string>();
  /** every Set-Cookie line this browser received */
  readonly setCookies: string[] = [];

  constructor(
    readonly base: string,
    readonly options: NodeBrowserOptions = {},
  ) {}

  /** Sends a request and hands back the response unread (an event stream, say). */
  open(target: string, init: NodeRequestInit = {}): Promise<IncomingMessage> {
    const url = new URL(target, this.base);
    const headers: Record<string, string> = { host: url.host, accept: 'text/html' };
    if (this.cookies.size > 0) headers['cookie'] = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    let body = init.body;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    } else if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      headers['accept'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    if (init.form || init.json !== undefined) headers['origin'] = url.origin;
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    Object.assign(headers, init.headers);
    const https = url.protocol === 'https:';
    const options = {
      host: this.options.connectTo?.host ?? url.hostname,
      port: this.options.connectTo?.port ?? Number(url.port || (https ? 443 : 80)),
      path: `${url.pathname}${url.search}`,
      method: init.method ?? (body !== undefined ? 'POST' : 'GET'),
      headers,
      localAddress: init.from ?? this.options.from,
      agent: false as const,
    };
    return new Promise((resolve, reject) => {
      const onResponse = (res: IncomingMessage) => {
        for (const line of res.headers['set-cookie'] ?? []) this.remember(line);
        resolve(res);
      };
      const req = https
        ? httpsRequest(
            {
              ...options,
              servername: url.hostname,
              ca: this.options.ca,
              ...(init.cert ? { cert: init.cert.cert, key: init.cert.key } : {}),
            },
            onResponse,
          )
        : httpRequest(options, onResponse);
      req.on('error', reject);
      req.end(body);
    });
  }

  async request(target: string, init: NodeRequestInit = {}): Promise<NodeAnswer> {
    const res = await this.open(target, init);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return {
      status: res.statusCode!,
      headers: res.headers,
      setCookies: res.headers['set-cookie'] ?? [],
      text,
      json,
      location: res.headers.location,
    };
  }

  private remember(line: string): void {
    this.setCookies.push(line);
    rememberCookie(this.cookies, line);
  }
}
