// The one HTTP responder of the service: every JSON, error, redirect and HTML answer that is not GraphQL's own
// or the OpenID provider's is written here, for the API's routes and the authorization server's alike.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { discardBody } from './discard-body.js';

const GRAPHQL_RESPONSE = 'application/graphql-response+json';

/** The media type a transport error is written in: the one the client asked for, if it is one we speak. */
function mediaTypeFor(req: IncomingMessage): string {
  const accept = req.headers.accept ?? '';
  return accept.includes(GRAPHQL_RESPONSE) && !accept.includes('application/json') ? GRAPHQL_RESPONSE : 'application/json';
}

/**
 * A request refused before GraphQL saw it, written as a GraphQL error envelope (no `data`). Whatever is left of its
 * body is discarded within the bound (discardBody), so a client still sending reads this answer.
 */
export function sendGraphQLRequestError(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  /** the GraphQL error code (`extensions.code`) */
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  discardBody(req, res);
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

/**
 * The error body of docs/endpoints.md: `{ statusCode, message, error }` with the status's reason phrase from
 * node:http, plus any extra fields given (a `code`, step-up parameters).
 */
export function httpErrorBody(status: number, message: string, extra: Record<string, unknown> = {}) {
  return { statusCode: status, message, error: STATUS_CODES[status] ?? 'Error', ...extra };
}

export function sendHttpError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, httpErrorBody(status, message), headers);
}

/**
 * A data store this request needs (the database, the rate-limit counters) is down or did not answer in time:
 * 503 with Retry-After and the usual body with code SERVICE_UNAVAILABLE, never a 500.
 */
export function sendServiceUnavailable(
  res: ServerResponse,
  retryAfterSeconds: number,
  message = 'The service is unavailable. Try again shortly.',
): void {
  sendJson(res, 503, httpErrorBody(503, message, { code: 'SERVICE_UNAVAILABLE' }), { 'retry-after': String(retryAfterSeconds) });
}

/** 303 See Other: where a form post continues (never stored). */
export function seeOther(res: ServerResponse, location: string): void {
  res.writeHead(303, { location, 'cache-control': 'no-store', 'content-length': 0 });
  res.end();
}

/**
 * The Content-Security-Policy of an HTML page (the login and account pages): scripts and styles inline only, fetches
 * to this origin only, never framed, and forms to this origin plus `formTargets`. CSP Level 3 applies `form-action`
 * to the redirects that follow a form's submission too, so a page whose form ends an application's authorization
 * request must name where that request returns (the origin of its validated `redirect_uri`); every other page names
 * nothing more than 'self'.
 */
export function pagePolicy(formTargets: readonly string[] = []): string {
  const formAction = ["'self'", ...formTargets].join(' ');
  return `default-src 'none'; connect-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`;
}

/**
 * The CSP source a redirect to `uri` needs under `form-action`: its origin for http(s), its scheme for a native
 * app's private-use scheme (`com.example.app:`); undefined for anything that cannot be a redirect target.
 */
export function formTargetOf(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.origin;
  // A scheme-source: letters, digits, '+', '-', '.' (RFC 3986), as the URL parser has checked.
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) && url.protocol !== 'javascript:' && url.protocol !== 'data:' ? url.protocol : undefined;
}

/**
 * An HTML page (the login and account pages): never stored, never leaking its URL (which may carry a token) to
 * anything it links to or loads, under `pagePolicy()`. `headers` may replace any of these (a page whose form may
 * continue elsewhere passes `pagePolicy` with its targets).
 */
export function sendHtml(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'content-security-policy': pagePolicy(),
    ...headers,
  });
  res.end(body);
}
