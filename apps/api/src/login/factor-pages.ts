import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Factor, type LoginLimits, type TotpEnrolment } from '@latchkey/auth';
import { eq, users, type Database } from '@latchkey/db';
import type { Logger } from 'pino';
import { sendJson } from '../http/respond.js';
import { describeFactors, FACTOR_NAMES } from './factor-names.js';
import { escapeHtml, page, sendHtml } from './html.js';
import { FormError, readFields } from './request-body.js';
import { isSameOrigin } from './same-origin.js';
import { PASSKEY_BUTTON, PASSKEY_SIGN_IN_SCRIPT, upstreamSignInLink } from './sign-in-page.js';
import { FACTORS_PAGE, type SignInFlow } from './sign-in-flow.js';
import { totpSetupPage } from './totp-setup-page.js';

/** The second factors the factor pages can check, for an account in the middle of signing in. */
export interface SecondFactors {
  /** whether the account has a confirmed authenticator app */
  hasTotp(userId: string): Promise<boolean>;
  /** checks a code from the account's authenticator app (single use per time step) */
  verifyTotp(userId: string, code: string): Promise<boolean>;
  /**
   * Starts setting up an authenticator app during sign-in (the account has none yet): the first one trusts
   * the factors proven so far, as Keycloak's "configure OTP" step does; changing it later needs a recent
   * sign-in on the account page.
   */
  startTotpEnrolment(userId: string, accountName: string): Promise<TotpEnrolment>;
  /** confirms the pending authenticator app with a code from it; false for a wrong code */
  confirmTotpEnrolment(userId: string, code: string): Promise<boolean>;
  recoveryCodesLeft(userId: string): Promise<number>;
  /** uses up one of the account's recovery codes */
  useRecoveryCode(userId: string, code: string): Promise<boolean>;
}

export interface FactorPagesOptions {
  publicUrl: string;
  db: Database;
  flow: SignInFlow;
  secondFactors: SecondFactors;
  limits: LoginLimits;
  logger: Logger;
  /** whether passkeys are configured */
  passkeys: boolean;
  /** the upstream OpenID provider's name, when one is configured (factor AUTHORIZATION_CODE) */
  upstreamName?: string;
  /** @default 4096 */
  maxBodyBytes?: number;
}


/** The opt-in of spec Multi-factor rules 5, on the forms of second steps. */
const REMEMBER_BROWSER = `<label class="inline"><input type="checkbox" name="remember" value="1"> Remember this browser for 30 days (it will not ask for this step here again)</label>
`;

/**
 * The factor pages (spec Multi-factor rules 1: the service moves the user between factor pages until the rule
 * is met): what this sign-in still needs and the forms to give it, and the endpoints that check an
 * authenticator-app code or a recovery code. Every wrong code counts against its source like a wrong token.
 */
export function createFactorPages(options: FactorPagesOptions) {
  const { db, flow, secondFactors, limits, logger } = options;
  const origin = new URL(options.publicUrl).origin;
  const maxBodyBytes = options.maxBodyBytes ?? 4096;
  const clientIp = (req: IncomingMessage) => req.socket.remoteAddress ?? 'unknown';
  const wantsJson = (req: IncomingMessage) => (req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json') || !(req.headers.accept ?? '').includes('text/html');

  function refuse(req: IncomingMessage, res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
    if (wantsJson(req)) {
      const reasons: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 429: 'Too Many Requests' };
      return sendJson(res, status, { statusCode: status, message, error: reasons[status] ?? 'Error' }, headers);
    }
    sendHtml(res, status, page('Sign in', `<p class="error" role="alert">${escapeHtml(message)}</p><p><a href="/login/factors">Back</a> · <a href="/login">Start again</a></p>`), headers);
  }
  const seeOther = (res: ServerResponse, location: string) => {
    res.writeHead(303, { location, 'cache-control': 'no-store', 'content-length': 0 });
    res.end();
  };

  async function factorsPage(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pending = await flow.pendingSignIn(req, res);
    if (!pending) return seeOther(res, '/login');
    const [user] = await db.select({ email: users.email }).from(users).where(eq(users.id, pending.userId)).limit(1);
    const used = describeFactors(pending.factors);
    const why = pending.standing.reason === 'acr' ? 'The application asks for a stronger sign-in.' : 'Your account needs one more step to sign in.';
    const alternatives = pending.standing.stillNeeded.map((factors) => `<li>${factors.map((factor) => escapeHtml(FACTOR_NAMES[factor])).join(' and ')}</li>`).join('');
    const needed = new Set(pending.standing.stillNeeded.flat());
    const sections: string[] = [];
    let script = '';
    if (needed.has('TOTP')) {
      sections.push(
        (await secondFactors.hasTotp(pending.userId))
          ? `<form method="post" action="/login/totp">
<label for="totp">Code from your authenticator app</label>
<input id="totp" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
${REMEMBER_BROWSER}<button type="submit">Continue</button>
</form>`
          : `<p>No authenticator app is set up for this account yet.</p>
<form method="post" action="/login/totp/setup"><button type="submit">Set up an authenticator app now</button></form>`,
      );
    }
    if (needed.has('RECOVERY_CODE') && (await secondFactors.recoveryCodesLeft(pending.userId)) > 0) {
      sections.push(`<form method="post" action="/login/recovery-code">
<label for="recovery">Recovery code</label>
<input id="recovery" name="code" autocomplete="off" required>
${REMEMBER_BROWSER}<button type="submit">Use the recovery code</button>
</form>`);
    }
    if (needed.has('WEBAUTHN') && options.passkeys) {
      sections.push(PASSKEY_BUTTON);
      script = PASSKEY_SIGN_IN_SCRIPT;
    }
    if (needed.has('AUTHORIZATION_CODE') && options.upstreamName) sections.push(upstreamSignInLink(options.upstreamName));
    if (needed.has('OTT') && user) {
      sections.push(`<form method="post" action="/ott/generate">
<input type="hidden" name="username" value="${escapeHtml(user.email)}">
<button type="submit">E-mail me a sign-in link</button>
</form>`);
    }
    sendHtml(res, 200, page('One more step', `<p>Signed in as <strong>${escapeHtml(user?.email ?? '')}</strong> with ${escapeHtml(used)}. ${escapeHtml(why)}</p>
<p>Still needed, any one of:</p>
<ul id="still-needed">${alternatives}</ul>
${sections.join('\n<p>or</p>\n')}
<p><a href="/login">Start again</a></p>`, script));
  }

  /** A code-checking endpoint: same origin, a sign-in in progress, the source's budget, then the check. */
  function codeEndpoint(factor: Factor, check: (userId: string, code: string) => Promise<boolean>, malformed: RegExp, what: string) {
    return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      if (!isSameOrigin(req, origin)) return refuse(req, res, 403, 'Cross-site requests are refused.');
      let fields: Record<string, string>;
      try {
        fields = await readFields(req, maxBodyBytes);
      } catch (error) {
        if (error instanceof FormError) return refuse(req, res, error.status, error.message);
        throw error;
      }
      const code = (fields['code'] ?? '').replace(/\s+/g, '');
      if (!malformed.test(code)) return refuse(req, res, 400, `code must be ${what}.`);
      const pending = await flow.pendingSignIn(req, res);
      if (!pending) return refuse(req, res, 401, 'No sign-in is in progress in this browser. Start again.');
      if (!pending.standing.stillNeeded.flat().includes(factor)) return refuse(req, res, 400, 'This sign-in does not need that step.');
      const ip = clientIp(req);
      const decision = await limits.consumeAttempt(ip);
      if (!decision.allowed) {
        return refuse(req, res, 429, `Too many attempts. Try again in ${decision.retryAfterSeconds} seconds.`, { 'retry-after': String(decision.retryAfterSeconds) });
      }
      if (!(await check(pending.userId, code))) {
        await limits.consumeFailed(ip).catch((error: unknown) => logger.error({ err: error }, 'rate-limit store unavailable'));
        return refuse(req, res, 401, 'The code is not valid.');
      }
      await limits.consumeSucceeded(ip).catch((error: unknown) => logger.error({ err: error }, 'rate-limit store unavailable'));
      const next = await flow.proveFactor(req, res, pending.userId, factor, { remember: fields['remember'] === '1' });
      if (wantsJson(req)) return sendJson(res, 200, { status: next === FACTORS_PAGE ? 'more-factors-needed' : 'signed-in', continue: next });
      seeOther(res, next);
    };
  }

  /** A same-origin form of a sign-in that still needs an authenticator app the account does not have yet. */
  async function enrolmentForm(req: IncomingMessage, res: ServerResponse) {
    if (!isSameOrigin(req, origin)) return void refuse(req, res, 403, 'Cross-site requests are refused.');
    let fields: Record<string, string>;
    try {
      fields = await readFields(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof FormError) return void refuse(req, res, error.status, error.message);
      throw error;
    }
    const pending = await flow.pendingSignIn(req, res);
    if (!pending) return void refuse(req, res, 401, 'No sign-in is in progress in this browser. Start again.');
    if (!pending.standing.stillNeeded.flat().includes('TOTP')) return void refuse(req, res, 400, 'This sign-in does not need that step.');
    if (await secondFactors.hasTotp(pending.userId)) return void refuse(req, res, 409, 'An authenticator app is already set up for this account.');
    return { pending, fields };
  }

  async function totpSetup(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await enrolmentForm(req, res);
    if (!form) return;
    const [user] = await db.select({ email: users.email }).from(users).where(eq(users.id, form.pending.userId)).limit(1);
    const enrolment = await secondFactors.startTotpEnrolment(form.pending.userId, user?.email ?? 'account');
    sendHtml(res, 200, totpSetupPage(enrolment, '/login/totp/confirm'));
  }

  async function totpConfirm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await enrolmentForm(req, res);
    if (!form) return;
    const code = (form.fields['code'] ?? '').replace(/\s+/g, '');
    if (!/^[0-9]{6}$/.test(code)) return refuse(req, res, 400, 'code must be 6 digits.');
    const ip = clientIp(req);
    const decision = await limits.consumeAttempt(ip);
    if (!decision.allowed) return refuse(req, res, 429, `Too many attempts. Try again in ${decision.retryAfterSeconds} seconds.`, { 'retry-after': String(decision.retryAfterSeconds) });
    if (!(await secondFactors.confirmTotpEnrolment(form.pending.userId, code))) {
      await limits.consumeFailed(ip).catch((error: unknown) => logger.error({ err: error }, 'rate-limit store unavailable'));
      return refuse(req, res, 400, 'The code is not valid. Set up the app again from the previous page.');
    }
    await limits.consumeSucceeded(ip).catch((error: unknown) => logger.error({ err: error }, 'rate-limit store unavailable'));
    seeOther(res, await flow.proveFactor(req, res, form.pending.userId, 'TOTP'));
  }

  return {
    totpSetup,
    totpConfirm,
    factorsPage,
    totp: codeEndpoint('TOTP', (userId, code) => secondFactors.verifyTotp(userId, code), /^[0-9]{6}$/, '6 digits'),
    recoveryCode: codeEndpoint('RECOVERY_CODE', (userId, code) => secondFactors.useRecoveryCode(userId, code), /^[A-Za-z0-9-]{8,40}$/, 'a recovery code (letters, digits and dashes)'),
  };
}
