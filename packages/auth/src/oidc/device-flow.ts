import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { RETRY_AFTER_SECONDS } from '@latchkey/db';
import { type RequestMemo, requestMemo } from '@latchkey/http';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { FailureOutcome, RateLimitDecision } from '../rate-limit/index.js';

// The device grant (RFC 8628) as Latchkey offers it: oidc-provider's `features.deviceFlow`, its pages in the
// application's style and CSP, and user-code entry under the sign-in limits.

/** How long a device code (and its user code) may be used: 10 minutes from the device authorization request. */
export const DEVICE_CODE_TTL_SECONDS = 600;

/** The user code's form: 8 letters of the base-20 alphabet (no vowels, no look-alikes), shown as XXXX-XXXX. */
export const USER_CODE_CHARSET = 'base-20';
export const USER_CODE_MASK = '****-****';

/**
 * RFC 8628 3.5: a device polls the token endpoint every `interval` seconds (5: the provider names none, which means
 * 5). A device code polled again sooner than this is answered `slow_down` (the client then adds 5 seconds to its
 * interval); a little under the interval, so a client that waits its interval is never told to slow down.
 */
export const POLL_WINDOW_SECONDS = 4;

/** The limits user-code entry is counted against: the sign-in limits of the client address. */
export interface UserCodeLimits {
  /** before a submitted user code is looked up (refused: too many attempts, or a paused or locked-out source) */
  beforeAttempt(ip: string): Promise<RateLimitDecision>;
  /** after a wrong, expired or used user code from `ip` */
  afterFailure(ip: string): Promise<FailureOutcome | undefined | unknown>;
}

export interface DeviceFlowOptions {
  /** the provider's code-entry path (where the user types the code) */
  path: string;
  /** the provider's token endpoint (where a device polls) */
  tokenPath: string;
  /** renders a page in the application's style; `body` is HTML */
  renderPage: (title: string, body: string) => string;
  /** user-code entry's limits and the client address they are counted by; none: not limited (the CLI's provider) */
  limits?:
    | {
        limits: UserCodeLimits;
        clientAddress: (req: IncomingMessage) => string;
        /**
         * One point per device code per POLL_WINDOW_SECONDS (a window of the same counter store, so every instance
         * sees each poll), keyed by a hash of the device code.
         */
        pollWindow?: (key: string) => Promise<RateLimitDecision>;
      }
    | undefined;
}

const text = (value: unknown) => String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The device pages carry no script of their own and load nothing; their forms post only to the provider. The one
 * script is the provider's auto-submitting form of `verification_uri_complete`, allowed by its hash alone.
 */
const DEVICE_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** The same, with an empty `script-src` the provider adds its auto-submit script's hash to. */
const AUTO_SUBMIT_CSP = `${DEVICE_PAGE_CSP}; script-src`;

/** The errors the provider re-renders the code-entry page with when the code typed is wrong, expired or used. */
const WRONG_CODE_ERRORS = new Set(['NotFoundError', 'ExpiredError', 'AlreadyUsedError', 'NoCodeError']);

function messageOf(err: Error | undefined): string {
  if (!err) return '<p>Enter the code your device or command line shows.</p>';
  switch (err.name) {
    case 'NotFoundError':
    case 'NoCodeError':
      return '<p class="error" role="alert">That code is not valid. Check it and try again.</p>';
    case 'ExpiredError':
      return '<p class="error" role="alert">That code has expired. Start again on your device to get a new one.</p>';
    case 'AlreadyUsedError':
      return '<p class="error" role="alert">That code has already been used. Start again on your device to get a new one.</p>';
    case 'AbortedError':
      return '<p class="error" role="alert">The sign-in was cancelled. Your device was told.</p>';
    default:
      return '<p class="error" role="alert">Something went wrong. Start again on your device.</p>';
  }
}

/**
 * oidc-provider's `features.deviceFlow` and a middleware for the provider: the code-entry, confirmation and
 * success pages in the application's style, with their CSP; every code submission counted against the client
 * address's sign-in limits, each wrong one a failure towards its pause and lockout.
 */
export function deviceFlow(options: DeviceFlowOptions) {
  /** requests whose submitted code was wrong, expired or used (told by the page that says so) */
  const wrongCode = requestMemo<true>('a wrong user code was entered');
  const feature = devicePages(options.renderPage, wrongCode);

  /** In front of the provider: its token endpoint paced, its code-entry path's CSP and limits. */
  async function inFront(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
    if (ctx.path === options.tokenPath && ctx.method === 'POST') return pollPaced(options.limits?.pollWindow, ctx, next);
    if (ctx.path !== options.path) return next();
    if (ctx.method === 'GET') {
      // verification_uri_complete: the provider answers with a form that submits itself (its script's hash is added).
      ctx.set('content-security-policy', AUTO_SUBMIT_CSP);
      // The address may carry the code (`?user_code=`): never sent on as a referrer.
      ctx.set('referrer-policy', 'no-referrer');
      return next();
    }
    if (ctx.method !== 'POST' || !options.limits) return next();
    const { limits, clientAddress } = options.limits;
    const ip = clientAddress(ctx.req);
    let decision: RateLimitDecision;
    try {
      decision = await limits.beforeAttempt(ip);
    } catch {
      // The counter store is down: no guess (letting every attempt through would defeat the limit).
      ctx.set('retry-after', String(RETRY_AFTER_SECONDS));
      return refusal(ctx, options.renderPage, 503, 'Sign-in is unavailable. Try again shortly.');
    }
    if (!decision.allowed) {
      ctx.set('retry-after', String(decision.retryAfterSeconds));
      return refusal(ctx, options.renderPage, 429, `Too many attempts. Try again in ${decision.retryAfterSeconds} seconds.`);
    }
    await next();
    if (wrongCode.has(ctx)) await limits.afterFailure(ip).catch(() => undefined);
  }

  return { feature, inFront };
}

/** A refused code submission, on a page of its own. */
function refusal(ctx: KoaContextWithOIDC, renderPage: DeviceFlowOptions['renderPage'], status: number, message: string): void {
  ctx.status = status;
  ctx.set('content-security-policy', DEVICE_PAGE_CSP);
  ctx.set('cache-control', 'no-store');
  ctx.set('referrer-policy', 'no-referrer');
  ctx.type = 'html';
  ctx.body = renderPage('Sign in a device', `<p class="error" role="alert">${text(message)}</p>`);
}

/**
 * A device code still waiting for its person, polled again within POLL_WINDOW_SECONDS of its last poll: its
 * `authorization_pending` becomes `slow_down` (RFC 8628 3.5). Judged after the provider's answer, so nothing but a
 * pending device code is ever counted.
 */
async function pollPaced(
  pollWindow: ((key: string) => Promise<RateLimitDecision>) | undefined,
  ctx: KoaContextWithOIDC,
  next: () => Promise<void>,
): Promise<void> {
  await next();
  const body = ctx.body as { error?: unknown } | undefined;
  const deviceCode = ctx.oidc?.params?.['device_code'];
  if (!pollWindow || body?.error !== 'authorization_pending' || typeof deviceCode !== 'string') return;
  const decision = await pollWindow(createHash('sha256').update(deviceCode).digest('base64url')).catch(() => undefined);
  if (decision && !decision.allowed) {
    ctx.body = { error: 'slow_down', error_description: 'you are polling too quickly and should back off at a reasonable rate' };
  }
}

/** The code-entry, confirmation and success pages (oidc-provider's `features.deviceFlow`). */
function devicePages(renderPage: DeviceFlowOptions['renderPage'], wrongCode: RequestMemo<true>) {
  const sent = (ctx: KoaContextWithOIDC, title: string, body: string) => {
    ctx.type = 'html';
    ctx.set('content-security-policy', DEVICE_PAGE_CSP);
    ctx.set('cache-control', 'no-store');
    ctx.set('referrer-policy', 'no-referrer');
    ctx.body = renderPage(title, body);
  };
  return {
    enabled: true,
    charset: USER_CODE_CHARSET,
    mask: USER_CODE_MASK,
    async userCodeInputSource(ctx: KoaContextWithOIDC, form: string, _out?: unknown, err?: Error) {
      if (err && WRONG_CODE_ERRORS.has(err.name)) {
        wrongCode.set(ctx, true);
        ctx.status = 400;
      }
      sent(ctx, 'Sign in a device', `${messageOf(err)}${labelled(form)}<button type="submit" form="op.deviceInputForm">Continue</button>`);
    },
    async userCodeConfirmSource(
      ctx: KoaContextWithOIDC,
      form: string,
      client: { clientId: string; clientName?: string | undefined },
      _deviceInfo: unknown,
      userCode: string,
    ) {
      const who = text(client.clientName || client.clientId);
      sent(
        ctx,
        'Confirm the code',
        `<p><strong>${who}</strong> asks to sign in as you.</p>
<p>Check that your device shows this code:</p>
<p><code id="user-code">${text(userCode)}</code></p>
<p>If you did not start this, or the code differs, cancel.</p>
${form}
<button autofocus type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" form="op.deviceConfirmForm" value="yes" name="abort">Cancel</button>`,
      );
    },
    async successSource(ctx: KoaContextWithOIDC) {
      const who = text(ctx.oidc.client?.clientName || ctx.oidc.client?.clientId);
      sent(ctx, 'Device signed in', `<p role="status">${who} is signed in. You can close this page and go back to your device.</p>`);
    },
  } satisfies NonNullable<Configuration['features']>['deviceFlow'];
}

/** The provider's code field, labelled for people and assistive technology. */
function labelled(form: string): string {
  return form
    .replace('<input\n    ', '<label for="user-code-input">Code</label><input id="user-code-input" ')
    .replace(' onfocus="this.select(); this.onfocus = undefined;"', '')
    .replace('placeholder="Enter code"', 'placeholder="XXXX-XXXX" autocapitalize="characters" spellcheck="false"');
}
