import { randomBytes } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  finishPasskeyAuthentication,
  finishPasskeyRegistration,
  PasskeyError,
  startPasskeyAuthentication,
  startPasskeyRegistration,
  type LoginLimits,
  type PasskeyRelyingParty,
} from '@latchkey/auth';
import { eq, users, type Database } from '@latchkey/db';
import type { Logger } from 'pino';
import { sendJson } from '../http/respond.js';
import { type Principal, CREDENTIAL_CHANGE_STEP_UP, meetsStepUp, stepUpChallengeHeader, stepUpParameters } from '@latchkey/auth/tokens';
import { readCookie, setCookie } from './cookies.js';
import { FormError, readJsonObject } from './request-body.js';
import { isSameOrigin } from './same-origin.js';
import { FACTORS_PAGE, type SignInFlow } from './sign-in-flow.js';

/** The browser the ceremony runs in: a random id in an HttpOnly cookie; challenges are bound to it. */
export const WEBAUTHN_COOKIE = 'lk_webauthn';

export interface PasskeyRoutesOptions {
  publicUrl: string;
  db: Database;
  relyingParty: PasskeyRelyingParty;
  limits: LoginLimits;
  logger: Logger;
  /** the sign-in across factors: where a proven passkey leads */
  flow: SignInFlow;
  /** the signed-in caller of a request (access token or provider session), null for none, 'rejected' for a bad token */
  caller: (req: IncomingMessage, res: ServerResponse) => Promise<Pick<Principal, 'subject' | 'acr' | 'authTime'> | null | 'rejected'>;
  /** @default 16384 */
  maxBodyBytes?: number;
  /** the client's address (TRUST_PROXY decides whose forwarded headers count): rate limits and security logs */
  clientAddress: (req: IncomingMessage) => string;
}
const fail = (
  res: ServerResponse,
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) => sendJson(res, status, { statusCode: status, message, error: STATUS_CODES[status] ?? 'Error', ...extra }, headers);

/**
 * The passkey endpoints of the spec (POST /webauthn/register/options, /webauthn/register,
 * /webauthn/authenticate/options, /login/webauthn). Registration needs a signed-in caller; sign-in continues in
 * the browser that proved the passkey, like a one-time token (amr `swk`).
 */
export function createPasskeyRoutes(options: PasskeyRoutesOptions) {
  const { db, relyingParty: rp, limits, logger, flow } = options;
  const origin = new URL(options.publicUrl).origin;
  const secure = options.publicUrl.startsWith('https:');
  const maxBodyBytes = options.maxBodyBytes ?? 16_384;

  /** The browser binding, created on first use (SameSite=Strict: never sent by another site's requests). */
  function bindingOf(req: IncomingMessage, res: ServerResponse): string {
    const existing = readCookie(req, WEBAUTHN_COOKIE);
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
    const created = randomBytes(32).toString('base64url');
    setCookie(res, WEBAUTHN_COOKIE, created, { path: '/', maxAgeSeconds: 3600, secure });
    return created;
  }

  const sameOrigin = (req: IncomingMessage) => isSameOrigin(req, origin);

  /** Runs a handler with the shared refusals: cross-site 403, bad bodies 4xx, refused passkeys 400. */
  function endpoint(handle: (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => Promise<void>) {
    return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      if (!sameOrigin(req)) return fail(res, 403, 'Cross-site requests are refused.');
      let body: Record<string, unknown>;
      try {
        body = await readJsonObject(req, maxBodyBytes);
      } catch (error) {
        if (error instanceof FormError) return fail(res, error.status, error.message);
        throw error;
      }
      try {
        await handle(req, res, body);
      } catch (error) {
        if (error instanceof PasskeyError) return fail(res, 400, error.message, { code: error.code });
        throw error;
      }
    };
  }

  async function signedInUser(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<{ id: string; email: string; displayName: string | null } | null> {
    const caller = await options.caller(req, res);
    if (caller === null || caller === 'rejected') {
      fail(
        res,
        401,
        caller === null ? 'Sign in to add a passkey.' : 'The access token is invalid or expired.',
        {},
        { 'www-authenticate': caller === null ? 'Bearer' : 'Bearer error="invalid_token"' },
      );
      return null;
    }
    // Adding a passkey is a credential change: it needs a recent sign-in (RFC 9470 challenge otherwise).
    if (!meetsStepUp(caller, CREDENTIAL_CHANGE_STEP_UP)) {
      fail(
        res,
        401,
        'Adding a passkey needs a recent sign-in.',
        { code: 'INSUFFICIENT_USER_AUTHENTICATION', ...stepUpParameters(CREDENTIAL_CHANGE_STEP_UP) },
        { 'www-authenticate': stepUpChallengeHeader(CREDENTIAL_CHANGE_STEP_UP) },
      );
      return null;
    }
    const [user] = await db.select().from(users).where(eq(users.id, caller.subject)).limit(1);
    if (!user || user.suspended) {
      fail(res, 403, 'This account cannot add passkeys.');
      return null;
    }
    return { id: user.id, email: user.email, displayName: user.displayName };
  }

  const registerOptions = endpoint(async (req, res) => {
    const user = await signedInUser(req, res);
    if (!user) return;
    const creation = await startPasskeyRegistration(db, rp, {
      userId: user.id,
      userName: user.email,
      displayName: user.displayName ?? user.email,
      binding: bindingOf(req, res),
    });
    sendJson(res, 200, creation);
  });

  const register = endpoint(async (req, res, body) => {
    const user = await signedInUser(req, res);
    if (!user) return;
    if (typeof body['response'] !== 'object' || body['response'] === null)
      return fail(res, 400, 'response must be the credential the browser created.');
    const label = body['label'];
    if (label !== undefined && typeof label !== 'string') return fail(res, 400, 'label must be a string.');
    const passkey = await finishPasskeyRegistration(db, rp, {
      userId: user.id,
      binding: bindingOf(req, res),
      response: body['response'] as never,
      label,
    });
    sendJson(res, 201, passkey);
  });

  const authenticateOptions = endpoint(async (req, res, body) => {
    const username = typeof body['username'] === 'string' ? body['username'] : undefined;
    const request = await startPasskeyAuthentication(db, rp, { binding: bindingOf(req, res), username });
    sendJson(res, 200, request);
  });

  const signIn = endpoint(async (req, res, body) => {
    const ip = options.clientAddress(req);
    const decision = await limits.consumeAttempt(ip);
    if (!decision.allowed)
      return fail(
        res,
        429,
        `Too many attempts. Try again in ${decision.retryAfterSeconds} seconds.`,
        {},
        { 'retry-after': String(decision.retryAfterSeconds) },
      );
    if (typeof body['response'] !== 'object' || body['response'] === null)
      return fail(res, 400, 'response must be the assertion the browser produced.');
    let result: Awaited<ReturnType<typeof finishPasskeyAuthentication>>;
    try {
      result = await finishPasskeyAuthentication(db, rp, { binding: bindingOf(req, res), response: body['response'] as never });
    } catch (error) {
      if (error instanceof PasskeyError)
        await limits.consumeFailed(ip).catch((failure: unknown) => logger.error({ err: failure }, 'rate-limit store unavailable'));
      throw error;
    }
    const [user] = await db.select({ suspended: users.suspended }).from(users).where(eq(users.id, result.userId)).limit(1);
    if (!user || user.suspended) return fail(res, 403, 'This account cannot sign in.');
    await limits.consumeSucceeded(ip).catch((failure: unknown) => logger.error({ err: failure }, 'rate-limit store unavailable'));
    const next = await flow.proveFactor(req, res, result.userId, 'WEBAUTHN');
    sendJson(res, 200, { status: next === FACTORS_PAGE ? 'more-factors-needed' : 'signed-in', continue: next });
  });

  return { registerOptions, register, authenticateOptions, signIn };
}
