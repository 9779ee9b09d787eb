import type { IncomingMessage } from 'node:http';

/**
 * Whether a state-changing request comes from our own pages (spec Cross-site rules). Browsers send Origin with
 * every POST, but a page under `Referrer-Policy: no-referrer` (the token page) sends `Origin: null`; then Fetch
 * Metadata decides. A request with neither header is not from a browser (no ambient cookies to abuse).
 */
export function isSameOrigin(req: IncomingMessage, origin: string): boolean {
  const sent = req.headers.origin;
  if (sent === origin) return true;
  if (sent !== undefined && sent !== 'null') return false;
  const site = req.headers['sec-fetch-site'];
  return site === undefined ? sent === undefined : site === 'same-origin';
}
