import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseCookie, stringifySetCookie } from 'cookie';

/** The browser's pending interaction (not secret): where a sign-in in this browser returns to. */
export const PENDING_COOKIE = 'lk_login';

export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  return parseCookie(header)[name];
}

/** HttpOnly, SameSite=Lax (top-level navigations only), Secure whenever the public URL is https. */
export function setCookie(
  res: ServerResponse,
  name: string,
  value: string,
  options: { path: string; maxAgeSeconds: number; secure: boolean },
): void {
  const cookie = stringifySetCookie(name, value, {
    path: options.path,
    maxAge: options.maxAgeSeconds,
    httpOnly: true,
    sameSite: 'lax',
    secure: options.secure,
  });
  const existing = res.getHeader('set-cookie');
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  res.setHeader('set-cookie', [...list, cookie]);
}

export function clearCookie(res: ServerResponse, name: string, options: { path: string; secure: boolean }): void {
  setCookie(res, name, '', { ...options, maxAgeSeconds: 0 });
}
