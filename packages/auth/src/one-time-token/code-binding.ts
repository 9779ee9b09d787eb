import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_TTL_SECONDS } from './generate.js';
import { isCodeBindingShaped, newCodeBinding } from './short-code.js';
import { stringifySetCookie } from 'cookie';
import { readCookie } from '../web/cookies.js';

/**
 * The browser a short code was asked from (secret): 256 random bits, stored server-side only as a hash. A short
 * code is only ever looked up together with this value, so only that browser can use it, or use up its budget.
 */
export const CODE_COOKIE = 'lk_code';
/** Sent to POST /login/ott only. */
const CODE_COOKIE_PATH = '/login';

/** This browser's binding value, if it sent a well-formed one. */
export function codeBindingOf(req: IncomingMessage): string | undefined {
  const value = readCookie(req, CODE_COOKIE);
  return value !== undefined && isCodeBindingShaped(value) ? value : undefined;
}

/**
 * The binding for a generate request: the browser's own when it already has one (so a code from an earlier
 * message still works in it), else a fresh one. Either way the cookie is (re)set, whether or not the account
 * exists, so the answer has the same shape for every address. HttpOnly, SameSite=Strict (only ever needed by
 * same-origin form posts), path /login, Secure on https; it lives as long as the longest-lived token.
 */
export function bindBrowser(req: IncomingMessage, res: ServerResponse, secure: boolean): string {
  const binding = codeBindingOf(req) ?? newCodeBinding();
  const cookie = stringifySetCookie(CODE_COOKIE, binding, {
    path: CODE_COOKIE_PATH,
    maxAge: MAX_TTL_SECONDS,
    httpOnly: true,
    sameSite: 'strict',
    secure,
  });
  const existing = res.getHeader('set-cookie');
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  res.setHeader('set-cookie', [...list, cookie]);
  return binding;
}
