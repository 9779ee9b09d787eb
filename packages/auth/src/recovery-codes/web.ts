import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Database } from '@latchkey/db';
import { sendHtml, type Route } from '@latchkey/http';
import type { AccountPageHelpers, FactorWeb, FactorWebDeps, PagePart } from '../web/factor-module.js';
import { codeEndpoint, codeField, REMEMBER_BROWSER } from '../web/factor-steps.js';
import { escapeHtml, page } from '../web/html.js';
import type { LoginScopes } from '../web/request-scope.js';
import { consumeRecoveryCode, countRecoveryCodes, generateRecoveryCodes } from './index.js';

/** The page that shows new recovery codes, once. */
function recoveryCodesPage(codes: readonly string[], backTo: string): string {
  return page(
    'Your recovery codes',
    `<p>Each code signs you in once when your other ways are not at hand. Keep them somewhere safe: they are shown only now.</p>
<ul id="recovery-codes">${codes.map((code) => `<li><code>${escapeHtml(code)}</code></li>`).join('')}</ul>
<p><a href="${escapeHtml(backTo)}">Done</a></p>`,
  );
}

/** On the factors page: the recovery-code form, while the account has codes left. */
async function factorsPageSection(db: Database, userId: string): Promise<PagePart | undefined> {
  if ((await countRecoveryCodes(db, userId)) === 0) return undefined;
  return {
    html: `<form method="post" action="/login/recovery-code">
<label for="recovery">Recovery code</label>
<input id="recovery" name="code" autocomplete="off" required>
${REMEMBER_BROWSER}<button type="submit">Use the recovery code</button>
</form>`,
  };
}

/** How many recovery codes are left, and the form that makes new ones. */
const accountSection = async (db: Database, userId: string): Promise<PagePart> => ({
  html: `<h2>Recovery codes</h2>
<p id="recovery-left">${await countRecoveryCodes(db, userId)} recovery codes left.</p>
<form method="post" action="/account/recovery-codes"><button type="submit">Make new recovery codes</button></form>`,
});

/** The account page's form that makes new recovery codes (the old ones stop working) and shows them once. */
function accountForm({ dbOf }: LoginScopes, { credentialForm, factorChanged }: AccountPageHelpers): Route {
  async function makeNew(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    const codes = await generateRecoveryCodes(dbOf(req), form.account.userId);
    factorChanged(req, form.account.userId, 'factor.added', 'RECOVERY_CODE');
    sendHtml(res, 200, recoveryCodesPage(codes, '/account'));
  }
  return { path: '/account/recovery-codes', methods: ['POST'], handler: makeNew };
}

/** Recovery codes (`otp`): each signs in once, as a later step, when the account's other ways are not at hand. */
export function createRecoveryCodeWeb({ context, limits, account }: FactorWebDeps): FactorWeb {
  const { dbOf } = context;
  const use = codeEndpoint(context, limits, {
    factor: 'RECOVERY_CODE',
    check: (userId, code, req) => consumeRecoveryCode(dbOf(req), userId, code),
    read: codeField(/^[A-Za-z0-9-]{8,40}$/, 'a recovery code (letters, digits and dashes)'),
  });
  return {
    routes: [{ path: '/login/recovery-code', methods: ['POST'], handler: use }, accountForm(context, account)],
    factorsPageSection: (step, req) => factorsPageSection(dbOf(req), step.userId),
    accountSection: (signedIn, req) => accountSection(dbOf(req), signedIn.userId),
  };
}
