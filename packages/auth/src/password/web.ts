import type { IncomingMessage, ServerResponse } from 'node:http';
import { seeOther, type Route } from '@latchkey/http';
import { PASSWORD_BODY_BYTES } from '../web/context.js';
import type { AccountPageHelpers, FactorStep, FactorWeb, FactorWebDeps, PagePart, SignedInAccount } from '../web/factor-module.js';
import {
  codeEndpoint,
  continueAfter,
  emailOf,
  enrolmentForm,
  type FieldReading,
  REMEMBER_BROWSER,
  refuseStep,
} from '../web/factor-steps.js';
import { escapeHtml } from '../web/html.js';
import type { Database } from '@latchkey/db';
import type { LoginScopes } from '../web/request-scope.js';
import { hasPassword, PasswordError, removePassword, setPassword, verifyPassword } from './index.js';

const SWITCHED_OFF = 'Passwords are switched off on this server.';

/** A password is checked exactly as typed (no trimming); the bound only keeps hashing cheap to refuse. */
const passwordField = (fields: Record<string, string>): FieldReading => {
  const password = fields['password'] ?? '';
  if (password.length === 0) return { problem: 'password is required.' };
  if (password.length > 1024) return { problem: 'password is too long.' };
  return { value: password };
};

/** A new password and its confirmation (the account's e-mail as the username, for password managers). */
function passwordSetupForm(action: string, email: string, button: string): string {
  return `<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="username" autocomplete="username" value="${escapeHtml(email)}">
<label for="new-password">New password (at least 12 characters)</label>
<input id="new-password" name="password" type="password" autocomplete="new-password" minlength="12" maxlength="256" required>
<label for="confirm-password">The same password again</label>
<input id="confirm-password" name="confirm" type="password" autocomplete="new-password" minlength="12" maxlength="256" required>
<button type="submit">${escapeHtml(button)}</button>
</form>`;
}

/** On the factors page: the password form, or (for its own rule) setting the first one on the way. */
async function factorsPageSection(db: Database, { userId, email, enrolOnTheWay }: FactorStep): Promise<PagePart | undefined> {
  if (email === undefined) return undefined;
  if (await hasPassword(db, userId))
    return {
      html: `<form method="post" action="/login/password">
<input type="hidden" name="username" autocomplete="username" value="${escapeHtml(email)}">
<label for="password">Your password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
${REMEMBER_BROWSER}<button type="submit">Continue</button>
</form>`,
    };
  return {
    html: enrolOnTheWay
      ? `<p>No password is set for this account yet.</p>
${passwordSetupForm('/login/password/setup', email, 'Set the password and continue')}`
      : '<p>No password is set for this account.</p>',
  };
}

/** The first password of an account, set on the way when its rule asks for one (not a guess: not counted). */
async function setupOnTheWay({ context }: FactorWebDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const db = context.dbOf(req);
  const has = (userId: string) => hasPassword(db, userId);
  const form = await enrolmentForm(context, req, res, { factor: 'PASSWORD', has, what: 'A password', bodyBytes: PASSWORD_BODY_BYTES });
  if (!form) return;
  const reading = passwordField(form.fields);
  if ('problem' in reading) return refuseStep(req, res, 400, reading.problem);
  if (form.fields['confirm'] !== reading.value) return refuseStep(req, res, 400, 'The two passwords differ.');
  const userId = form.pending.userId;
  try {
    await setPassword(db, { userId, email: (await emailOf(db, userId)) ?? '', password: reading.value });
  } catch (error) {
    if (error instanceof PasswordError) return refuseStep(req, res, 400, error.message);
    throw error;
  }
  context.audit.record({ type: 'factor.added', details: { factor: 'PASSWORD' }, actor: userId, subject: userId, request: req });
  await continueAfter(context, req, res, { userId, factor: 'PASSWORD' });
}

/** Whether a password is set, and the forms that set, change or remove it. */
async function accountSection(db: Database, account: SignedInAccount): Promise<PagePart> {
  const status = (await hasPassword(db, account.userId))
    ? `<p id="password-status">A password is set. It is only ever asked as a later step of a sign-in, never as the only one.</p>
${passwordSetupForm('/account/password', account.email, 'Change the password')}
<form method="post" action="/account/password/remove"><button type="submit">Remove the password</button></form>`
    : `<p id="password-status">No password is set. A password is only ever asked as a later step of a sign-in, never as the only one.</p>
${passwordSetupForm('/account/password', account.email, 'Set a password')}`;
  return { html: `<h2>Password</h2>\n${status}` };
}

/** The account page's forms: set, change or remove the account's password. */
function accountForms({ dbOf }: LoginScopes, { credentialForm, problem, factorChanged }: AccountPageHelpers): Route[] {
  /** Sets or changes the password (`password`, `confirm`): a credential change, so a recent sign-in. */
  async function set(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res, PASSWORD_BODY_BYTES);
    if (!form) return;
    const password = form.fields['password'] ?? '';
    if (password.length === 0) return problem(res, 400, 'password is required.');
    if (form.fields['confirm'] !== password) return problem(res, 400, 'The two passwords differ.');
    try {
      await setPassword(dbOf(req), { userId: form.account.userId, email: form.account.email, password });
    } catch (error) {
      if (error instanceof PasswordError) return problem(res, 400, error.message);
      throw error;
    }
    factorChanged(req, form.account.userId, 'factor.added', 'PASSWORD');
    seeOther(res, '/account?done=password-set');
  }

  async function remove(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    if (!(await removePassword(dbOf(req), form.account.userId))) return problem(res, 404, 'No password is set for this account.');
    factorChanged(req, form.account.userId, 'factor.removed', 'PASSWORD');
    seeOther(res, '/account?done=password-removed');
  }

  return [
    { path: '/account/password', methods: ['POST'], handler: set },
    { path: '/account/password/remove', methods: ['POST'], handler: remove },
  ];
}

/** What the account page says once a password form is done. */
const ACCOUNT_DONE = {
  'password-set': 'The password is set. It is asked for where your account needs a second step.',
  'password-removed': 'The password was removed.',
};

/** With PASSWORDS off, every password route answers 404 saying so, and no page offers one. */
function switchedOff(account: AccountPageHelpers): FactorWeb {
  const off = (path: string): Route => ({ path, methods: ['POST'], handler: async (req, res) => refuseStep(req, res, 404, SWITCHED_OFF) });
  const offOnAccountPage = (path: string): Route => ({
    path,
    methods: ['POST'],
    handler: async (_req, res) => account.problem(res, 404, SWITCHED_OFF),
  });
  return {
    routes: [
      off('/login/password'),
      off('/login/password/setup'),
      offOnAccountPage('/account/password'),
      offOnAccountPage('/account/password/remove'),
    ],
  };
}

/**
 * A password (amr `pwd`), only ever a later step of a sign-in: the factors page's form, the first one set on the
 * way when the account's own rule asks for one, and the account page's section. Every wrong password counts
 * against its source like a wrong token.
 */
export function createPasswordWeb(deps: FactorWebDeps): FactorWeb {
  const { context, settings, limits, account } = deps;
  if (!settings.passwords) return switchedOff(account);
  const { dbOf } = context;
  const verify = codeEndpoint(context, limits, {
    factor: 'PASSWORD',
    check: (userId, password, req) => verifyPassword(dbOf(req), { userId, password }),
    read: passwordField,
    wrong: 'The password is not valid.',
    bodyBytes: PASSWORD_BODY_BYTES,
  });
  return {
    routes: [
      { path: '/login/password', methods: ['POST'], handler: verify },
      { path: '/login/password/setup', methods: ['POST'], handler: (req, res) => setupOnTheWay(deps, req, res) },
      ...accountForms(context, account),
    ],
    factorsPageSection: (step, req) => factorsPageSection(dbOf(req), step),
    accountSection: (signedIn, req) => accountSection(dbOf(req), signedIn),
    accountDone: ACCOUNT_DONE,
  };
}
