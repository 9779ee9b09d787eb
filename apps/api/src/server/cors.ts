import type { IncomingMessage, ServerResponse } from 'node:http';

export interface CorsOptions {
  /** exact origins (scheme://host:port) allowed to call the API from a browser */
  origins: ReadonlySet<string>;
  /** @default 600 */
  maxAgeSeconds?: number;
}

/**
 * CORS from an allow-list (spec Endpoints, OPTIONS row). An allowed origin is echoed; any other gets no
 * Access-Control-Allow-Origin at all (never "*", never "null"), so the browser withholds the response.
 * No credentials mode: the API takes bearer tokens, not cookies.
 */
export function createCors({ origins, maxAgeSeconds = 600 }: CorsOptions) {
  const maxAge = String(maxAgeSeconds);
  return {
    /** Adds the headers for a simple/actual request. Always Vary: Origin, since the answer depends on it. */
    apply(req: IncomingMessage, res: ServerResponse): void {
      const origin = req.headers.origin;
      res.setHeader('vary', 'Origin');
      if (origin !== undefined && origins.has(origin)) {
        res.setHeader('access-control-allow-origin', origin);
        res.setHeader(
          'access-control-expose-headers',
          'x-request-id, www-authenticate, dpop-nonce, ratelimit, ratelimit-policy, retry-after',
        );
      }
    },
    /** Answers a preflight: 204 in every case; only an allowed origin gets the allow headers. */
    preflight(req: IncomingMessage, res: ServerResponse): void {
      const origin = req.headers.origin;
      const headers: Record<string, string> = {
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
        allow: 'GET, POST, OPTIONS',
        'content-length': '0',
      };
      if (origin !== undefined && origins.has(origin)) {
        headers['access-control-allow-origin'] = origin;
        headers['access-control-allow-methods'] = 'POST, GET';
        // The client-name headers (Hive's and Apollo's) name the app whose uses of deprecated fields are counted.
        headers['access-control-allow-headers'] = 'content-type, authorization, dpop, graphql-client-name, apollographql-client-name';
        headers['access-control-max-age'] = maxAge;
      }
      res.writeHead(204, headers);
      res.end();
    },
  };
}
