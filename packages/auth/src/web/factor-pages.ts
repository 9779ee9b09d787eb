import type { IncomingMessage, ServerResponse } from 'node:http';
import { findUserById, type Database } from '@latchkey/db';
import { refuse as refuseWith, seeOther, sendJson, wantsJson, type Route } from '@latchkey/http';
import type { Factor } from '../factors/index.js';
import type { SignInLimits } from '../rate-limit/index.js';
import { FORM_BODY_BYTES, PASSWORD_BODY_BYTES, type LoginContext } from './context.js';
import { describeFactors, FACTOR_NAMES } from './factor-names.js';
import { sameOriginForm } from './form.js';
import { escapeHtml, page } from './html.js';
import { factorSections, factorSectionsScript, type FactorSectionsOptions } from './factor-sections.js';
import { totpSetupPage } from './setup-pages.js';
import { FACTORS_PAGE } from './sign-in-flow.js';

export interface FactorPagesOptions extends FactorSectionsOptions {
  /** the login limits, for the factor a code proves (the same budget for all; metrics count by factor) */
  limits: (factor: Factor) => SignInLimits;
}

/** The forms that prove a factor, by path. */
const FACTOR_FORMS = [
  '/login/totp',
  '/login/password',
  '/login/password/setup',
  '/login/recovery-code',
  '/login/totp/setup',
  '/login/totp/confirm',
] as const;

/** A field as typed, or why it cannot be checked. */
type FieldReading = { value: string } | { problem: string };

/** A 6-digit code, a recovery code: spaces taken out, then the shape checked. */
const codeField =
  (pattern: RegExp, what: string) =>
  (fields: Record<string, string>): FieldReading => {
    const code = (fields['code'] ?? '').replace(/\s+/g, '');
    return pattern.test(code) ? { value: code } : { problem: `code must be ${what}.` };
  };

/** A password is checked exactly as typed (no trimming); the bound only keeps hashing cheap to refuse. */
const passwordField = (fields: Record<string, string>): FieldReading => {
  const password = fields['password'] ?? '';
  if (password.length === 0) return { problem: 'password is required.' };
  if (password.length > 1024) return { problem: 'password is too long.' };
  return { value: password };
};

/** A refusal on the factor pages: the message, back to the factors, or start again. */
const refusalPage = (message: string) =>
  page(
    'Sign in',
    `<p class="error" role="alert">${escapeHtml(message)}</p><p><a href="/login/factors">Back</a> · <a href="/login">Start again</a></p>`,
  );
const refuse = (req: IncomingMessage, res: ServerResponse, status: number, message: string, headers?: Record<string, string>) =>
  refuseWith(req, res, status, message, refusalPage, headers);
const tooMany = (req: IncomingMessage, res: ServerResponse) => (status: 429, message: string, headers: Record<string, string>) =>
  refuse(req, res, status, message, headers);
const emailOf = async (db: Database, userId: string) => (await findUserById(db, userId))?.email;

/** The factors page: who is signing in and how so far, what is still needed, and a section per factor that can give it. */
async function factorsPage(
  { db, flow, sendSignInPage }: LoginContext,
  options: FactorPagesOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const pending = await flow.pendingSignIn(req, res);
  if (!pending) return seeOther(res, '/login');
  const email = await emailOf(db, pending.userId);
  const used = describeFactors(pending.factors);
  const why =
    pending.standing.reason === 'acr' ? 'The application asks for a stronger sign-in.' : 'Your account needs one more step to sign in.';
  const alternatives = pending.standing.stillNeeded
    .map((factors) => `<li>${factors.map((factor) => escapeHtml(FACTOR_NAMES[factor])).join(' and ')}</li>`)
    .join('');
  const needed = new Set(pending.standing.stillNeeded.flat());
  // A factor the account lacks may be set up on the way only for its own rules, never for an application's
  // step-up: a new credential planted by whoever holds the first factor would make the stronger sign-in moot.
  const enrolOnTheWay = pending.standing.reason === 'rule';
  const sections = await factorSections(options, needed, pending.userId, email, enrolOnTheWay);
  await sendSignInPage(
    req,
    res,
    200,
    page(
      'One more step',
      `<p>Signed in as <strong>${escapeHtml(email ?? '')}</strong> with ${escapeHtml(used)}. ${escapeHtml(why)}</p>
<p>Still needed, any one of:</p>
<ul id="still-needed">${alternatives}</ul>
${sections.join('\n<p>or</p>\n')}
<p><a href="/login">Start again</a></p>`,
      factorSectionsScript(options, needed),
    ),
  );
}

/** A code-checking endpoint: same origin, a sign-in in progress, the source's budget, then the check. */
function codeEndpoint(
  { origin, flow, gate }: LoginContext,
  limits: FactorPagesOptions['limits'],
  factor: Factor,
  check: (userId: string, code: string) => Promise<boolean>,
  read: (fields: Record<string, string>) => FieldReading,
  bodyBytes = FORM_BODY_BYTES,
) {
  const wrong = factor === 'PASSWORD' ? 'The password is not valid.' : 'The code is not valid.';
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const fields = await sameOriginForm(req, res, origin, refuse, bodyBytes);
    if (!fields) return;
    const reading = read(fields);
    if ('problem' in reading) return refuse(req, res, 400, reading.problem);
    const code = reading.value;
    const pending = await flow.pendingSignIn(req, res);
    if (!pending) return refuse(req, res, 401, 'No sign-in is in progress in this browser. Start again.');
    if (!pending.standing.stillNeeded.flat().includes(factor)) return refuse(req, res, 400, 'This sign-in does not need that step.');
    const attempt = await gate.attempt(req, res, limits(factor), tooMany(req, res));
    if (!attempt) return;
    if (!(await check(pending.userId, code))) {
      await attempt.failed(pending.userId);
      return refuse(req, res, 401, wrong);
    }
    await attempt.succeeded();
    const next = await flow.proveFactor(req, res, pending.userId, factor, { remember: fields['remember'] === '1' });
    if (wantsJson(req)) return sendJson(res, 200, { status: next === FACTORS_PAGE ? 'more-factors-needed' : 'signed-in', continue: next });
    seeOther(res, next);
  };
}

/**
 * A same-origin form of a sign-in that still needs `factor` and whose account has none yet (`has` says
 * whether it has one; `what` names it in the refusal).
 */
async function enrolmentForm(
  { origin, flow }: LoginContext,
  req: IncomingMessage,
  res: ServerResponse,
  factor: Factor,
  has: (userId: string) => Promise<boolean>,
  what: string,
  bodyBytes = FORM_BODY_BYTES,
) {
  const fields = await sameOriginForm(req, res, origin, refuse, bodyBytes);
  if (!fields) return;
  const pending = await flow.pendingSignIn(req, res);
  if (!pending) return void refuse(req, res, 401, 'No sign-in is in progress in this browser. Start again.');
  if (!pending.standing.stillNeeded.flat().includes(factor)) return void refuse(req, res, 400, 'This sign-in does not need that step.');
  if (pending.standing.reason !== 'rule')
    return void refuse(req, res, 403, 'A stronger sign-in asks for a factor the account already has; set up new ones on the account page.');
  if (await has(pending.userId)) return void refuse(req, res, 409, `${what} is already set up for this account.`);
  return { pending, fields };
}

const totpEnrolmentForm = (context: LoginContext, { secondFactors }: FactorPagesOptions, req: IncomingMessage, res: ServerResponse) =>
  enrolmentForm(context, req, res, 'TOTP', secondFactors.hasTotp, 'An authenticator app');

async function totpSetup(context: LoginContext, options: FactorPagesOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await totpEnrolmentForm(context, options, req, res);
  if (!form) return;
  const enrolment = await options.secondFactors.startTotpEnrolment(
    form.pending.userId,
    (await emailOf(context.db, form.pending.userId)) ?? 'account',
  );
  await context.sendSignInPage(req, res, 200, totpSetupPage(enrolment, '/login/totp/confirm'));
}

async function totpConfirm(context: LoginContext, options: FactorPagesOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await totpEnrolmentForm(context, options, req, res);
  if (!form) return;
  const code = (form.fields['code'] ?? '').replace(/\s+/g, '');
  if (!/^[0-9]{6}$/.test(code)) return refuse(req, res, 400, 'code must be 6 digits.');
  const attempt = await context.gate.attempt(req, res, options.limits('TOTP'), tooMany(req, res));
  if (!attempt) return;
  if (!(await options.secondFactors.confirmTotpEnrolment(form.pending.userId, code))) {
    await attempt.failed(form.pending.userId);
    return refuse(req, res, 400, 'The code is not valid. Set up the app again from the previous page.');
  }
  await attempt.succeeded();
  const userId = form.pending.userId;
  // Set up on the way (its rule asked for it): a factor added, as on the account page.
  context.audit.record({ type: 'factor.added', details: { factor: 'TOTP' }, actor: userId, subject: userId, request: req });
  seeOther(res, await context.flow.proveFactor(req, res, userId, 'TOTP'));
}

/** The first password of an account, set on the way when its rule asks for one (not a guess: not counted). */
async function passwordSetup(context: LoginContext, options: FactorPagesOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { hasPassword, setPassword } = options.secondFactors;
  if (!hasPassword || !setPassword) return refuse(req, res, 404, 'Passwords are switched off on this server.');
  const form = await enrolmentForm(context, req, res, 'PASSWORD', hasPassword, 'A password', PASSWORD_BODY_BYTES);
  if (!form) return;
  const reading = passwordField(form.fields);
  if ('problem' in reading) return refuse(req, res, 400, reading.problem);
  if (form.fields['confirm'] !== reading.value) return refuse(req, res, 400, 'The two passwords differ.');
  const refusal = await setPassword(form.pending.userId, (await emailOf(context.db, form.pending.userId)) ?? '', reading.value);
  if (refusal) return refuse(req, res, 400, refusal);
  const userId = form.pending.userId;
  context.audit.record({ type: 'factor.added', details: { factor: 'PASSWORD' }, actor: userId, subject: userId, request: req });
  const next = await context.flow.proveFactor(req, res, userId, 'PASSWORD');
  if (wantsJson(req)) return sendJson(res, 200, { status: next === FACTORS_PAGE ? 'more-factors-needed' : 'signed-in', continue: next });
  seeOther(res, next);
}

/** The handler of each factor form: the code checks, and the set-ups on the way. */
function factorForms(
  context: LoginContext,
  options: FactorPagesOptions,
): Record<(typeof FACTOR_FORMS)[number], (req: IncomingMessage, res: ServerResponse) => Promise<void>> {
  const { secondFactors, limits } = options;
  const verifyPassword = secondFactors.verifyPassword;
  return {
    '/login/totp': codeEndpoint(
      context,
      limits,
      'TOTP',
      (userId, code) => secondFactors.verifyTotp(userId, code),
      codeField(/^[0-9]{6}$/, '6 digits'),
    ),
    '/login/recovery-code': codeEndpoint(
      context,
      limits,
      'RECOVERY_CODE',
      (userId, code) => secondFactors.useRecoveryCode(userId, code),
      codeField(/^[A-Za-z0-9-]{8,40}$/, 'a recovery code (letters, digits and dashes)'),
    ),
    '/login/password': verifyPassword
      ? codeEndpoint(
          context,
          limits,
          'PASSWORD',
          (userId, password) => verifyPassword(userId, password),
          passwordField,
          PASSWORD_BODY_BYTES,
        )
      : async (req, res) => refuse(req, res, 404, 'Passwords are switched off on this server.'),
    '/login/password/setup': (req, res) => passwordSetup(context, options, req, res),
    '/login/totp/setup': (req, res) => totpSetup(context, options, req, res),
    '/login/totp/confirm': (req, res) => totpConfirm(context, options, req, res),
  };
}

/**
 * The factor pages (spec Multi-factor rules 1: the service moves the user between factor pages until the rule
 * is met): what this sign-in still needs and the forms to give it, and the endpoints that check an
 * authenticator-app code or a recovery code. Every wrong code counts against its source like a wrong token.
 */
export function createFactorPages(context: LoginContext, options: FactorPagesOptions): Route[] {
  const forms = factorForms(context, options);
  return [
    { path: FACTORS_PAGE, methods: ['GET', 'HEAD'], handler: (req, res) => factorsPage(context, options, req, res) },
    ...FACTOR_FORMS.map((path): Route => ({ path, methods: ['POST'], handler: forms[path] })),
  ];
}
