import type { IncomingMessage, ServerResponse } from 'node:http';
import { seeOther, sendHtml, type Route } from '@latchkey/http';
import type { LoginContext } from '../web/context.js';
import type { FactorStep, FactorWeb, FactorWebDeps, PagePart } from '../web/factor-module.js';
import { codeEndpoint, codeField, emailOf, enrolmentForm, REMEMBER_BROWSER, refuseStep, tooMany } from '../web/factor-steps.js';
import { escapeHtml, page } from '../web/html.js';
import {
  confirmTotpEnrolment,
  deriveTotpKey,
  hasConfirmedTotp,
  removeTotp,
  startTotpEnrolment,
  TotpError,
  type TotpEnrolment,
  verifyTotp,
} from './index.js';

/** What the authenticator app's pages share: the login context, its limits, the sealing key, the name apps show. */
interface TotpDeps extends FactorWebDeps {
  /** TOTP secrets are sealed with a key derived from the server secret: every instance that shares it agrees */
  totpKey: Uint8Array;
  /** the name authenticator apps show for this service */
  issuer: string;
}

/** A code is right or wrong; a TotpError is a wrong one (replayed, not set up), anything else a fault. */
async function accepted(proof: Promise<unknown>): Promise<boolean> {
  try {
    await proof;
    return true;
  } catch (error) {
    if (error instanceof TotpError) return false;
    throw error;
  }
}

/**
 * The set-up page of an authenticator app: the QR code (inline SVG: nothing is loaded from elsewhere), the
 * secret for typing, and the confirmation form. Shown once; the response is never stored (no-store).
 */
function totpSetupPage(enrolment: TotpEnrolment, confirmAction: string): string {
  // The secret in groups of four, as authenticator apps show it.
  const grouped = enrolment.secret.replace(/(.{4})/g, '$1 ').trim();
  return page(
    'Set up an authenticator app',
    `
<p>Scan this code with your authenticator app, or type the key below into it.</p>
<figure id="totp-qr" aria-label="QR code for your authenticator app">${enrolment.qrSvg}</figure>
<p>Key: <code id="totp-secret">${escapeHtml(grouped)}</code></p>
<form method="post" action="${escapeHtml(confirmAction)}">
<label for="totp-code">The 6-digit code your app shows now</label>
<input id="totp-code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<button type="submit">Confirm</button>
</form>`,
  );
}

/** On the factors page: the code form, or (for its own rule) setting the app up on the way. */
async function factorsPageSection({ context }: TotpDeps, step: FactorStep, req: IncomingMessage): Promise<PagePart> {
  if (await hasConfirmedTotp(context.dbOf(req), step.userId))
    return {
      html: `<form method="post" action="/login/totp">
<label for="totp">Code from your authenticator app</label>
<input id="totp" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
${REMEMBER_BROWSER}<button type="submit">Continue</button>
</form>`,
    };
  return {
    html: step.enrolOnTheWay
      ? `<p>No authenticator app is set up for this account yet.</p>
<form method="post" action="/login/totp/setup"><button type="submit">Set up an authenticator app now</button></form>`
      : '<p>No authenticator app is set up for this account.</p>',
  };
}

const enrolmentOnTheWay = ({ context }: TotpDeps, req: IncomingMessage, res: ServerResponse) =>
  enrolmentForm(context, req, res, {
    factor: 'TOTP',
    has: (userId) => hasConfirmedTotp(context.dbOf(req), userId),
    what: 'An authenticator app',
  });

/** POST /login/totp/setup: the first authenticator app of an account whose rule asks for one, set up on the way. */
async function setupOnTheWay(deps: TotpDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await enrolmentOnTheWay(deps, req, res);
  if (!form) return;
  const db = deps.context.dbOf(req);
  const userId = form.pending.userId;
  const accountName = (await emailOf(db, userId)) ?? 'account';
  const enrolment = await startTotpEnrolment(db, deps.totpKey, { userId, accountName, issuer: deps.issuer });
  await deps.context.sendSignInPage(req, res, 200, totpSetupPage(enrolment, '/login/totp/confirm'));
}

/** POST /login/totp/confirm: a code from the new app confirms it, and proves the factor. */
async function confirmOnTheWay(deps: TotpDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { context } = deps;
  const form = await enrolmentOnTheWay(deps, req, res);
  if (!form) return;
  const code = (form.fields['code'] ?? '').replace(/\s+/g, '');
  if (!/^[0-9]{6}$/.test(code)) return refuseStep(req, res, 400, 'code must be 6 digits.');
  const attempt = await context.gate.attempt(req, res, deps.limits, tooMany(req, res));
  if (!attempt) return;
  const userId = form.pending.userId;
  if (!(await accepted(confirmTotpEnrolment(context.dbOf(req), deps.totpKey, { userId, code })))) {
    await attempt.failed(userId);
    return refuseStep(req, res, 400, 'The code is not valid. Set up the app again from the previous page.');
  }
  await attempt.succeeded();
  // Set up on the way (its rule asked for it): a factor added, as on the account page.
  context.audit.record({ type: 'factor.added', details: { factor: 'TOTP' }, actor: userId, subject: userId, request: req });
  seeOther(res, await context.flow.proveFactor(req, res, userId, 'TOTP'));
}

/** Whether an authenticator app is set up, and the form that removes it or sets one up. */
async function accountSection({ dbOf }: LoginContext, req: IncomingMessage, userId: string): Promise<PagePart> {
  const totp = await hasConfirmedTotp(dbOf(req), userId);
  return {
    html: `<h2>Authenticator app</h2>
${
  totp
    ? '<p>An authenticator app is set up.</p><form method="post" action="/account/totp/remove"><button type="submit">Remove the authenticator app</button></form>'
    : '<p>No authenticator app is set up.</p><form method="post" action="/account/totp/setup"><button type="submit">Set up an authenticator app</button></form>'
}`,
  };
}

/** The account page's forms: set up (then confirm) or remove the account's authenticator app. */
function accountForms({ context: { dbOf }, account, totpKey, issuer }: TotpDeps): Route[] {
  const { credentialForm, problem, factorChanged } = account;
  async function setup(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    try {
      const enrolment = await startTotpEnrolment(dbOf(req), totpKey, {
        userId: form.account.userId,
        accountName: form.account.email,
        issuer,
      });
      sendHtml(res, 200, totpSetupPage(enrolment, '/account/totp/confirm'));
    } catch (error) {
      if (error instanceof TotpError) return problem(res, 409, error.message);
      throw error;
    }
  }

  async function confirm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    try {
      await confirmTotpEnrolment(dbOf(req), totpKey, { userId: form.account.userId, code: (form.fields['code'] ?? '').trim() });
    } catch (error) {
      if (error instanceof TotpError) return problem(res, 400, error.message);
      throw error;
    }
    factorChanged(req, form.account.userId, 'factor.added', 'TOTP');
    seeOther(res, '/account?done=totp-added');
  }

  async function remove(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    if (!(await removeTotp(dbOf(req), form.account.userId))) return problem(res, 404, 'No authenticator app is set up for this account.');
    factorChanged(req, form.account.userId, 'factor.removed', 'TOTP');
    seeOther(res, '/account?done=totp-removed');
  }

  return [
    { path: '/account/totp/setup', methods: ['POST'], handler: setup },
    { path: '/account/totp/confirm', methods: ['POST'], handler: confirm },
    { path: '/account/totp/remove', methods: ['POST'], handler: remove },
  ];
}

/** What the account page says once a form of the authenticator app is done. */
const ACCOUNT_DONE = {
  'totp-added': 'The authenticator app is set up. It is asked for where your account needs a second step.',
  'totp-removed': 'The authenticator app was removed.',
};

/**
 * An authenticator app (TOTP, RFC 6238): the code form of the factors page, setting the first app up on the way
 * when the account's own rule asks for one (as Keycloak's "configure OTP" step does), and the account page's
 * section. Every wrong code counts against its source like a wrong token.
 */
export function createTotpWeb(factorDeps: FactorWebDeps): FactorWeb {
  const { context, settings, limits } = factorDeps;
  const deps: TotpDeps = {
    ...factorDeps,
    totpKey: deriveTotpKey(settings.keySecret),
    issuer: settings.relyingParty?.name ?? 'Latchkey',
  };
  const verify = codeEndpoint(context, limits, {
    factor: 'TOTP',
    check: (userId, code, req) => accepted(verifyTotp(context.dbOf(req), deps.totpKey, { userId, code })),
    read: codeField(/^[0-9]{6}$/, '6 digits'),
  });
  return {
    routes: [
      { path: '/login/totp', methods: ['POST'], handler: verify },
      { path: '/login/totp/setup', methods: ['POST'], handler: (req, res) => setupOnTheWay(deps, req, res) },
      { path: '/login/totp/confirm', methods: ['POST'], handler: (req, res) => confirmOnTheWay(deps, req, res) },
      ...accountForms(deps),
    ],
    factorsPageSection: (step, req) => factorsPageSection(deps, step, req),
    accountSection: (signedIn, req) => accountSection(context, req, signedIn.userId),
    accountDone: ACCOUNT_DONE,
  };
}
