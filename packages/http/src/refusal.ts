import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendHtml, sendHttpError } from './respond.js';

/** Whether a refusal is answered in JSON: the request sent JSON, or its Accept does not ask for HTML (scripts, curl). */
export function wantsJson(req: IncomingMessage): boolean {
  return (
    (req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json') || !(req.headers.accept ?? '').includes('text/html')
  );
}

/**
 * Refuses a request to a page or form: `{statusCode, message, error}` for scripts, the page `page(message)`
 * renders for a browser (the message, and a way back).
 */
export function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  message: string,
  page: (message: string) => string,
  headers: Record<string, string> = {},
): void {
  if (wantsJson(req)) return sendHttpError(res, status, message, headers);
  sendHtml(res, status, page(message), headers);
}
