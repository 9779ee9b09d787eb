import type { IncomingMessage, ServerResponse } from 'node:http';
import { CodedError } from '@latchkey/errors';
import { discardBody } from './discard-body.js';
import { BodyTooLargeError, readBody } from './read-body.js';

const FORM_ERROR_CODES = { 400: 'FORM_INVALID', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' } as const;

/** A form or JSON body refused, with its 4xx status, a code per status and a message for the person at the page. */
export class FormError extends CodedError<(typeof FORM_ERROR_CODES)[keyof typeof FORM_ERROR_CODES]> {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super('FormError', FORM_ERROR_CODES[status], message);
  }
}

/**
 * The body of a form or JSON request (the login and account pages, the WebAuthn endpoints), read within `maxBytes`,
 * in one of the `accepted` media types; a JSON body must be an object. Every refusal is a FormError with its 4xx
 * status and a clear message; what is left of a body refused unread or too large is discarded within the bound
 * (discardBody), so the client reads the refusal `res` carries next.
 */
async function readAccepted(
  req: IncomingMessage,
  res: ServerResponse,
  maxBytes: number,
  accepted: readonly string[],
  refusal: string,
): Promise<{ type: string; text: string }> {
  const refused = (status: 400 | 413 | 415, message: string) => {
    discardBody(req, res);
    return new FormError(status, message);
  };
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!accepted.includes(type)) throw refused(415, refusal);
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) throw refused(413, `The request body is larger than ${maxBytes} bytes.`);
  try {
    return { type, text: (await readBody(req, maxBytes)).toString('utf8') };
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw refused(413, `The request body is larger than ${maxBytes} bytes.`);
    throw refused(400, 'The request body could not be read.');
  }
}

function jsonObject(text: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new FormError(400, 'The request body is not valid JSON.');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new FormError(400, 'The request body must be a JSON object.');
  return json as Record<string, unknown>;
}

/**
 * The fields of a login form: `application/x-www-form-urlencoded` (pages) or `application/json` (scripts).
 * Only string values are kept; anything else is a 4xx with a clear message.
 */
export async function readFields(req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<Record<string, string>> {
  const { type, text } = await readAccepted(
    req,
    res,
    maxBytes,
    ['application/x-www-form-urlencoded', 'application/json'],
    'Send the form as application/x-www-form-urlencoded or application/json.',
  );
  if (type === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(text));
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(jsonObject(text))) {
    if (typeof value === 'string') fields[key] = value;
    else throw new FormError(400, `${key.slice(0, 40)} must be a string.`);
  }
  return fields;
}

/** A JSON object body (application/json only), for the WebAuthn endpoints whose payloads are nested. */
export async function readJsonObject(req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<Record<string, unknown>> {
  const { text } = await readAccepted(req, res, maxBytes, ['application/json'], 'Send the request as application/json.');
  return text.length === 0 ? {} : jsonObject(text);
}
