import type { IncomingMessage } from 'node:http';
import { BodyTooLargeError, readBody } from '../http/read-body.js';

export class FormError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The fields of a login form: `application/x-www-form-urlencoded` (pages) or `application/json` (scripts).
 * Only string values are kept; anything else is a 4xx with a clear message.
 */
export async function readFields(req: IncomingMessage, maxBytes: number): Promise<Record<string, string>> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded' && type !== 'application/json') {
    throw new FormError(415, 'Send the form as application/x-www-form-urlencoded or application/json.');
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) throw new FormError(413, `The request body is larger than ${maxBytes} bytes.`);
  let raw: Buffer;
  try {
    raw = await readBody(req, maxBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new FormError(413, `The request body is larger than ${maxBytes} bytes.`);
    throw new FormError(400, 'The request body could not be read.');
  }
  const text = raw.toString('utf8');
  if (type === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(text));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new FormError(400, 'The request body is not valid JSON.');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new FormError(400, 'The request body must be a JSON object.');
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(json)) {
    if (typeof value === 'string') fields[key] = value;
    else throw new FormError(400, `${key.slice(0, 40)} must be a string.`);
  }
  return fields;
}

/** A JSON object body (application/json only), for the WebAuthn endpoints whose payloads are nested. */
export async function readJsonObject(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new FormError(415, 'Send the request as application/json.');
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) throw new FormError(413, `The request body is larger than ${maxBytes} bytes.`);
  let raw: Buffer;
  try {
    raw = await readBody(req, maxBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new FormError(413, `The request body is larger than ${maxBytes} bytes.`);
    throw new FormError(400, 'The request body could not be read.');
  }
  if (raw.length === 0) return {};
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new FormError(400, 'The request body is not valid JSON.');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new FormError(400, 'The request body must be a JSON object.');
  return json as Record<string, unknown>;
}
