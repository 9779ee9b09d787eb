import type { IncomingMessage, ServerResponse } from 'node:http';
import { consumeOneTimeToken, findUserIdByEmail, generateOneTimeToken, normalizeUsername, type DeliveryHandler, type GenerateRequest, type LoginLimits, type Provider, type RateLimitDecision } from '@latchkey/auth';
import { users, type Database } from '@latchkey/db';
import type { Logger } from 'pino';
import { sendJson } from '../http/respond.js';
import { CONTINUE_COOKIE, PENDING_COOKIE, clearCookie, readCookie, setCookie } from './cookies.js';
import { escapeHtml, page } from './html.js';
import { FormError, readFields } from './request-body.js';
import { isSameOrigin } from './same-origin.js';

export interface LoginRoutesOptions {
  publicUrl: string;
  db: Database;
  provider: Provider;
  delivery: DeliveryHandler;
  /** rate limits and lockout of generation and consumption (spec One-time token login 4) */
  limits: LoginLimits;
  logger: Logger;
  /**
   * The customizable generate-request step (spec One-time token login 5): sees the request and may change
   * the time-to-live. @default keeps the 5-minute default
   */
  onGenerateRequest?: (request: GenerateRequest, req: IncomingMessage) => GenerateRequest;
  /** @default 4096 */
  maxBodyBytes?: number;
  /** unknown addresses that ask for a link get an account (e-mail unverified). @default false */
  selfSignup?: boolean;
}

/** How each way of signing in is reported (RFC 8176 amr, our acr). */
export const LOGIN_METHODS = {
  otp: { amr: ['otp'], acr: 'urn:latchkey:acr:otp' },
  swk: { amr: ['swk'], acr: 'urn:latchkey:acr:passkey' },
} as const;
export type LoginMethod = keyof typeof LOGIN_METHODS;
const USERNAME = /^[^\s@]{1,64}@[^\s@]{1,190}$/;
const CONTINUATION_TTL_SECONDS = 120;
const UID = /^[A-Za-z0-9_-]{10,64}$/;

/**
 * "Sign in with a passkey": discoverable credentials, no username needed. Uses the browser's own JSON
 * helpers for WebAuthn options and credentials.
 */
const PASSKEY_SIGN_IN_SCRIPT = `document.getElementById('passkey').addEventListener('click', async () => {
  const error = document.getElementById('passkey-error');
  error.textContent = '';
  try {
    const post = (path, body) => fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' });
    const options = await (await post('/webauthn/authenticate/options', {})).json();
    const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) });
    const answer = await post('/login/webauthn', { response: credential.toJSON() });
    const result = await answer.json();
    if (!answer.ok) throw new Error(result.message);
    location.assign(result.continue);
  } catch (failure) {
    error.textContent = failure && failure.message ? failure.message : 'The passkey sign-in did not complete.';
  }
});`;

const GENERATED = 'If the address belongs to an account, a sign-in link is on its way. It works once, for 5 minutes.';

function html(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    // A page that may carry a token in its URL must not leak it to anything it links to or loads.
    'referrer-policy': 'no-referrer',
    'content-security-policy': "default-src 'none'; connect-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ...headers,
  });
  res.end(body);
}

function wantsJson(req: IncomingMessage): boolean {
  return (req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json');
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { location, 'cache-control': 'no-store', 'content-length': 0 });
  res.end();
}

/**
 * The login endpoints of the spec (POST /ott/generate, GET and POST /login/ott) and the provider's
 * interaction page. Reachable without authentication; state-changing ones check Origin (Cross-site rules).
 */
export function createLoginRoutes(options: LoginRoutesOptions) {
  const { db, provider, delivery, limits, logger, publicUrl } = options;
  const origin = new URL(publicUrl).origin;
  const secure = publicUrl.startsWith('https:');
  const maxBodyBytes = options.maxBodyBytes ?? 4096;

  const sameOrigin = (req: IncomingMessage) => isSameOrigin(req, origin);

  function refuse(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
    if (wantsJson(req) || !(req.headers.accept ?? '').includes('text/html')) {
      const reasons: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 429: 'Too Many Requests' };
      return sendJson(res, status, { statusCode: status, message, error: reasons[status] ?? 'Error' });
    }
    html(res, status, page('Sign in', `<p class="error" role="alert">${escapeHtml(message)}</p><p><a href="/">Start again</a></p>`));
  }

  /** The client's address as the socket sees it (no proxy headers are trusted). */
  const clientIp = (req: IncomingMessage) => req.socket.remoteAddress ?? 'unknown';

  /** 429 with Retry-After, the same for every account (the counters know nothing about accounts). */
  function tooMany(req: IncomingMessage, res: ServerResponse, decision: RateLimitDecision & { allowed: false }): void {
    res.setHeader('retry-after', String(decision.retryAfterSeconds));
    refuse(req, res, 429, `Too many attempts. Try again in ${decision.retryAfterSeconds} seconds.`);
  }

  /** A counter store that cannot answer is not a reason to let everything through: 503. */
  async function decide(check: Promise<RateLimitDecision>): Promise<RateLimitDecision | 'unavailable'> {
    try {
      return await check;
    } catch (error) {
      logger.error({ err: error }, 'rate-limit store unavailable');
      return 'unavailable';
    }
  }

  /** Self sign-up: the account exists from now on, its e-mail unverified; a suspended one stays suspended. */
  async function signUp(email: string): Promise<string | null> {
    await db.insert(users).values({ email }).onConflictDoNothing();
    return findUserIdByEmail(db, email);
  }

  /** Delivery happens after the answer is sent, so neither timing nor outcome can tell accounts apart. */
  function deliverLater(req: IncomingMessage, res: ServerResponse, username: string): void {
    setImmediate(() => {
      void (async () => {
        let userId = await findUserIdByEmail(db, username);
        // Unknown addresses never get an account implicitly, unless self sign-up is switched on.
        if (!userId && options.selfSignup) userId = await signUp(username);
        if (!userId) return;
        const request = options.onGenerateRequest ? options.onGenerateRequest({ username }, req) : { username };
        const { token, expiresAt } = await generateOneTimeToken(db, request);
        const magicLink = `${publicUrl}/login/ott?token=${encodeURIComponent(token)}`;
        await delivery.deliver({ to: username, token, magicLink, expiresAt }, { request: req, response: res });
      })().catch((error: unknown) => logger.error({ err: error, handler: delivery.name }, 'one-time token delivery failed'));
    });
  }

  /** A same-origin form's fields, or undefined once the refusal (403, 4xx) has been sent. */
  async function formOf(req: IncomingMessage, res: ServerResponse): Promise<Record<string, string> | undefined> {
    if (!sameOrigin(req)) return void refuse(req, res, 403, 'Cross-site requests are refused.');
    try {
      return await readFields(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof FormError) return void refuse(req, res, error.status, error.message);
      throw error;
    }
  }

  const unavailableNow = (res: ServerResponse) =>
    sendJson(res, 503, { statusCode: 503, message: 'Sign-in is unavailable. Try again shortly.', error: 'Service Unavailable' });

  async function generate(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const fields = await formOf(req, res);
    if (!fields) return;
    const username = normalizeUsername(fields['username'] ?? '');
    if (!USERNAME.test(username)) return refuse(req, res, 400, 'username must be an e-mail address.');
    const decision = await decide(limits.generate(clientIp(req), username));
    if (decision === 'unavailable') return unavailableNow(res);
    if (!decision.allowed) return tooMany(req, res, decision);
    deliverLater(req, res, username);
    if (wantsJson(req)) return sendJson(res, 202, { status: 'accepted', message: GENERATED });
    redirect(res, '/login/ott?sent=1');
  }

  /** The token page: the browser fills the field from the link; the server never echoes the token. */
  function tokenPage(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', publicUrl);
    const notice = url.searchParams.has('sent') ? `<p role="status">${escapeHtml(GENERATED)}</p>` : '';
    const body = `${notice}
<form method="post" action="/login/ott">
<label for="token">Sign-in code from your e-mail</label>
<input id="token" name="token" autocomplete="one-time-code" required>
<button type="submit">Sign in</button>
</form>`;
    // Take the token from the link into the form, then drop it from the address bar and history.
    const script = `(function(){var p=new URLSearchParams(location.search),t=p.get('token');if(t){document.getElementById('token').value=t;history.replaceState(null,'',location.pathname);}})();`;
    html(res, 200, page('Sign in with your link', body, script));
  }

  async function consume(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const fields = await formOf(req, res);
    if (!fields) return;
    const ip = clientIp(req);
    const decision = await decide(limits.consumeAttempt(ip));
    if (decision === 'unavailable') return unavailableNow(res);
    if (!decision.allowed) return tooMany(req, res, decision);
    const consumed = await consumeOneTimeToken(db, (fields['token'] ?? '').trim());
    const userId = consumed ? await findUserIdByEmail(db, consumed.username) : null;
    if (!consumed || !userId) {
      // Wrong tokens slow down, then stop, the source that sends them; the account itself is never locked.
      await limits.consumeFailed(ip).catch((error: unknown) => logger.error({ err: error }, 'rate-limit store unavailable'));
      return refuse(req, res, 401, 'The sign-in link or code is invalid or has expired.');
    }
    await limits.consumeSucceeded(ip).catch((error: unknown) => logger.error({ err: error }, 'rate-limit store unavailable'));
    redirect(res, await continueSignIn(req, res, consumed.username, 'otp'));
  }

  /**
   * This browser has just proven who it is: it gets a single-use continuation (a one-time token in an HttpOnly
   * cookie, recorded server-side as `method:email` so neither the method nor the person can be altered) and
   * goes back to its own pending sign-in, or to `/` to start one. Returns where to go.
   */
  async function continueSignIn(req: IncomingMessage, res: ServerResponse, email: string, method: LoginMethod): Promise<string> {
    const continuation = await generateOneTimeToken(db, { username: `${method}:${email}`, ttlSeconds: CONTINUATION_TTL_SECONDS });
    setCookie(res, CONTINUE_COOKIE, continuation.token, { path: '/interaction', maxAgeSeconds: CONTINUATION_TTL_SECONDS, secure });
    const pending = readCookie(req, PENDING_COOKIE);
    return pending && UID.test(pending) ? `/interaction/${pending}` : '/';
  }

  /** The person and method a continuation token records, or null. */
  function continuationOf(recorded: string): { email: string; method: LoginMethod } | null {
    const separator = recorded.indexOf(':');
    const method = recorded.slice(0, separator);
    if (separator < 0 || !(method in LOGIN_METHODS)) return null;
    return { email: recorded.slice(separator + 1), method: method as LoginMethod };
  }

  /** The provider's login prompt: finish it with this browser's continuation, or show the sign-in form. */
  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    let details;
    try {
      details = await provider.interactionDetails(req, res);
    } catch {
      clearCookie(res, PENDING_COOKIE, { path: '/', secure });
      return refuse(req, res, 400, 'This sign-in has expired or belongs to another browser. Start again from the application.');
    }
    if (details.uid !== uid) return refuse(req, res, 400, 'This sign-in belongs to another browser.');
    if (details.prompt.name !== 'login') {
      // Consent is implicit for first-party clients; third-party consent screens are not offered.
      return void (await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'consent is not available for this client' }, { mergeWithLastSubmission: false }));
    }
    const continuation = readCookie(req, CONTINUE_COOKIE);
    if (continuation) {
      clearCookie(res, CONTINUE_COOKIE, { path: '/interaction', secure });
      const consumed = await consumeOneTimeToken(db, continuation);
      const proven = consumed ? continuationOf(consumed.username) : null;
      const accountId = proven ? await findUserIdByEmail(db, proven.email) : null;
      if (proven && accountId) {
        clearCookie(res, PENDING_COOKIE, { path: '/', secure });
        const { amr, acr } = LOGIN_METHODS[proven.method];
        return provider.interactionFinished(req, res, { login: { accountId, amr: [...amr], acr, remember: true } }, { mergeWithLastSubmission: false });
      }
    }
    setCookie(res, PENDING_COOKIE, uid, { path: '/', maxAgeSeconds: 3600, secure });
    const hint = typeof details.params['login_hint'] === 'string' ? details.params['login_hint'] : '';
    html(res, 200, page('Sign in', `
<form method="post" action="/ott/generate">
<label for="username">E-mail address</label>
<input id="username" name="username" type="email" autocomplete="username webauthn" required value="${escapeHtml(hint)}">
<button type="submit">E-mail me a sign-in link</button>
</form>
<p>or</p>
<button id="passkey" type="button">Sign in with a passkey</button>
<p id="passkey-error" class="error" role="alert"></p>`, PASSKEY_SIGN_IN_SCRIPT));
  }

  return { generate, tokenPage, consume, interaction, continueSignIn };
}
export type LoginRoutes = ReturnType<typeof createLoginRoutes>;
