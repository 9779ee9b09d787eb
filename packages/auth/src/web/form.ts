import type { IncomingMessage, ServerResponse } from 'node:http';
import { discardBody, FormError, readFields } from '@latchkey/http';
import { FORM_BODY_BYTES } from './context.js';
import { isSameOrigin } from './same-origin.js';

/** How a page or route answers a refusal (in JSON or as its own page). */
export type Refusal = (req: IncomingMessage, res: ServerResponse, status: number, message: string) => void;

/**
 * The fields of a form post from our own pages (spec Cross-site rules), or undefined once refused: 403 for a
 * cross-site post, 4xx for a body that cannot be read.
 */
export async function sameOriginForm(
  req: IncomingMessage,
  res: ServerResponse,
  origin: string,
  refusal: Refusal,
  maxBytes = FORM_BODY_BYTES,
): Promise<Record<string, string> | undefined> {
  if (!isSameOrigin(req, origin)) {
    discardBody(req, res);
    return void refusal(req, res, 403, 'Cross-site requests are refused.');
  }
  try {
    return await readFields(req, res, maxBytes);
  } catch (error) {
    if (error instanceof FormError) return void refusal(req, res, error.status, error.message);
    throw error;
  }
}
