import type { IncomingMessage, ServerResponse } from 'node:http';
import { findUserById, type Database } from '@latchkey/db';
import { refuse as refuseWith, seeOther, sendJson, wantsJson } from '@latchkey/http';
import type { Factor } from '../factors/index.js';
import type { SignInLimits } from '../rate-limit/index.js';
import { FORM_BODY_BYTES, type LoginContext } from './context.js';
import { sameOriginForm } from './form.js';
import { escapeHtml, page } from './html.js';
import { FACTORS_PAGE } from './sign-in-flow.js';

// What the forms of a sign-in's later steps share, whichever factor they prove: reading the field, the checks
// before the factor's own (same origin, a sign-in in progress that needs it, the source's budget), the refusals.

/** A field as typed, or why it cannot be checked. */
export type FieldReading = { value: string } | { problem: string };

/** A 6-digit code, a recovery code: spaces taken out, then the shape checked. */
export const codeField =
  (pattern: RegExp, what: string) =>
  (fields: Record<string, string>): FieldReading => {
    const code = (fields['code'] ?? '').replace(/\s+/g, '');
    return pattern.test(code) ? { value: code } : { problem: `code must be ${what}.` };
  };

/** The opt-in of spec Multi-factor rules 5, on the forms of second steps. */
export const REMEMBER_BROWSER = `<label class="inline"><input type="checkbox" name="remember" value="1"> Remember this browser for 30 days (it will not ask for this step here again)</label>
`;

/** A refusal on the factor pages: the message, back to the factors, or start again. */
const refusalPage = (message: string) =>
  page(
    'Sign in',
    `<p class="error" role="alert">${escapeHtml(message)}</p><p><a href="/login/factors">Back</a> · <a href="/login">Start again</a></p>`,
  );

/** Refuses a factor form: a page for a browser, JSON for a script. */
export const refuseStep = (req: IncomingMessage, res: ServerResponse, status: number, message: string, headers?: Record<string, string>) =>
  refuseWith(req, res, status, message, refusalPage, headers);

/** The refusal of a form whose source has spent its budget. */
export const tooMany = (req: IncomingMessage, res: ServerResponse) => (status: 429, message: string, headers: Record<string, string>) =>
  refuseStep(req, res, status, message, headers);

export const emailOf = async (db: Database, userId: string) => (await findUserById(db, userId))?.email;

/** Where a proven factor leads: the next page, or (for a script) where the sign-in stands. */
export async function continueAfter(
  { flow }: LoginContext,
  req: IncomingMessage,
  res: ServerResponse,
  proven: { userId: string; factor: Factor; remember?: boolean },
) {
  const next = await flow.proveFactor(req, res, proven.userId, proven.factor, { remember: proven.remember === true });
  if (wantsJson(req)) return sendJson(res, 200, { status: next === FACTORS_PAGE ? 'more-factors-needed' : 'signed-in', continue: next });
  seeOther(res, next);
}

/** How a code-checking form checks and names its factor. */
export interface CodeStep {
  factor: Factor;
  /** whether the code (or password) proves the factor for this account (`req`: the form's, whose database it reads) */
  check(userId: string, code: string, req: IncomingMessage): Promise<boolean>;
  read(fields: Record<string, string>): FieldReading;
  /** what a wrong one is called in the refusal. @default 'The code is not valid.' */
  wrong?: string;
  /** @default FORM_BODY_BYTES */
  bodyBytes?: number;
}

/** A code-checking endpoint: same origin, a sign-in in progress, the source's budget, then the check. */
export function codeEndpoint(context: LoginContext, limits: SignInLimits, step: CodeStep) {
  const { origin, flow, gate } = context;
  const { factor } = step;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const fields = await sameOriginForm(req, res, origin, refuseStep, step.bodyBytes ?? FORM_BODY_BYTES);
    if (!fields) return;
    const reading = step.read(fields);
    if ('problem' in reading) return refuseStep(req, res, 400, reading.problem);
    const code = reading.value;
    const pending = await flow.pendingSignIn(req, res);
    if (!pending) return refuseStep(req, res, 401, 'No sign-in is in progress in this browser. Start again.');
    if (!pending.standing.stillNeeded.flat().includes(factor)) return refuseStep(req, res, 400, 'This sign-in does not need that step.');
    const attempt = await gate.attempt(req, res, limits, tooMany(req, res));
    if (!attempt) return;
    if (!(await step.check(pending.userId, code, req))) {
      await attempt.failed(pending.userId);
      return refuseStep(req, res, 401, step.wrong ?? 'The code is not valid.');
    }
    await attempt.succeeded();
    await continueAfter(context, req, res, { userId: pending.userId, factor, remember: fields['remember'] === '1' });
  };
}

/**
 * A same-origin form of a sign-in that still needs `factor` and whose account has none yet (`has` says
 * whether it has one; `what` names it in the refusal).
 */
export async function enrolmentForm(
  { origin, flow }: LoginContext,
  req: IncomingMessage,
  res: ServerResponse,
  enrolment: { factor: Factor; has: (userId: string, req: IncomingMessage) => Promise<boolean>; what: string; bodyBytes?: number },
) {
  const fields = await sameOriginForm(req, res, origin, refuseStep, enrolment.bodyBytes ?? FORM_BODY_BYTES);
  if (!fields) return;
  const pending = await flow.pendingSignIn(req, res);
  if (!pending) return void refuseStep(req, res, 401, 'No sign-in is in progress in this browser. Start again.');
  if (!pending.standing.stillNeeded.flat().includes(enrolment.factor))
    return void refuseStep(req, res, 400, 'This sign-in does not need that step.');
  if (pending.standing.reason !== 'rule')
    return void refuseStep(
      req,
      res,
      403,
      'A stronger sign-in asks for a factor the account already has; set up new ones on the account page.',
    );
  if (await enrolment.has(pending.userId, req))
    return void refuseStep(req, res, 409, `${enrolment.what} is already set up for this account.`);
  return { pending, fields };
}
