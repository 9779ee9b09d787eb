import type { IncomingMessage } from 'node:http';

const JSON_MEDIA_TYPES = new Set(['application/json', 'application/graphql-response+json']);

/** `application/json; charset=utf-8` -> ok; anything else (form, multipart, text/plain, none) is refused. */
export function acceptableContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(';');
  if (!JSON_MEDIA_TYPES.has(type!.trim().toLowerCase())) return false;
  for (const param of params) {
    const [name, value] = param.split('=');
    if (name?.trim().toLowerCase() === 'charset' && value?.trim().replace(/"/g, '').toLowerCase() !== 'utf-8') return false;
  }
  return true;
}

/**
 * Yoga answers an Accept it cannot serve with an empty 406; answer it with a body, cheaply (no parsing).
 * `text/html` alone counts only when it is a GET for the GraphiQL page (`graphiql` on); otherwise such a
 * request (an Accept without a wildcard) is refused like any other Accept that allows no JSON type.
 */
export function acceptable(req: IncomingMessage, graphiql: boolean): boolean {
  const accept = req.headers.accept;
  if (!accept || accept.includes('json') || accept.includes('*/*') || accept.includes('application/*')) return true;
  // streamed results, and the GraphiQL page on GET
  return (
    accept.includes('text/event-stream') ||
    accept.includes('multipart/mixed') ||
    (graphiql && req.method === 'GET' && accept.includes('text/html'))
  );
}
