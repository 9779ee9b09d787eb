import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Database } from '@latchkey/db';
import { seeOther, type Route } from '@latchkey/http';
import type { AccountPageHelpers, PagePart } from '../web/factor-module.js';
import { escapeHtml, when } from '../web/html.js';
import type { LoginScopes } from '../web/request-scope.js';
import { PasskeyError } from './errors.js';
import { isPasskeyId, listPasskeys, removePasskey, renamePasskey, type PasskeySummary } from './index.js';

/** "Add a passkey": the browser's own JSON helpers for WebAuthn, the provider session as the credential. */
const ADD_PASSKEY_SCRIPT = `document.getElementById('add-passkey').addEventListener('submit', async (event) => {
  event.preventDefault();
  const error = document.getElementById('add-error');
  error.textContent = '';
  try {
    const post = async (path, body) => {
      const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' });
      const result = await response.json();
      if (!response.ok) throw new Error(result.message);
      return result;
    };
    const options = await post('/webauthn/register/options', {});
    const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) });
    const label = document.getElementById('new-label').value.trim();
    await post('/webauthn/register', label ? { response: credential.toJSON(), label } : { response: credential.toJSON() });
    location.assign('/account?done=added');
  } catch (failure) {
    error.textContent = failure && failure.message ? failure.message : 'The passkey was not added.';
  }
});`;

/** What the account page says once a passkey form is done. */
export const ACCOUNT_DONE = {
  added: 'The passkey was added.',
  renamed: 'The passkey was renamed.',
  removed: 'The passkey was removed. It no longer signs you in.',
};

function passkeyItem(passkey: PasskeySummary): string {
  const id = escapeHtml(passkey.id);
  const label = escapeHtml(passkey.label ?? 'Passkey');
  const used = passkey.lastUsedAt ? `last used ${when(passkey.lastUsedAt)}` : 'not used yet';
  return `<li>
<strong>${label}</strong> <small>added ${when(passkey.createdAt)}, ${used}${passkey.backedUp ? ', synced' : ''}</small>
<form method="post" action="/account/passkeys/rename">
<input type="hidden" name="id" value="${id}">
<label>New name <input name="label" required maxlength="64" value="${escapeHtml(passkey.label ?? '')}"></label>
<button type="submit">Rename</button>
</form>
<form method="post" action="/account/passkeys/remove">
<input type="hidden" name="id" value="${id}">
<button type="submit">Remove “${label}”</button>
</form>
</li>`;
}

/** The account's passkeys (rename, remove) and the form that adds one; or that passkeys are not configured. */
export async function passkeyAccountSection(db: Database, passkeysEnabled: boolean, userId: string): Promise<PagePart> {
  if (!passkeysEnabled) return { html: '<h2>Passkeys</h2><p>Passkeys are not configured on this server.</p>' };
  const passkeys = await listPasskeys(db, userId);
  return {
    html: `<h2>Passkeys</h2>
${passkeys.length ? `<ul id="passkeys">${passkeys.map(passkeyItem).join('\n')}</ul>` : '<p>You have no passkeys yet.</p>'}
<form id="add-passkey">
<label for="new-label">Name for a new passkey (optional)</label>
<input id="new-label" name="label" maxlength="64" autocomplete="off">
<button type="submit">Add a passkey</button>
</form>
<p id="add-error" class="error" role="alert"></p>`,
    script: ADD_PASSKEY_SCRIPT,
  };
}

/** The account page's forms that rename or remove one of the account's passkeys (`id`). */
export function passkeyAccountForms({ dbOf }: LoginScopes, { credentialForm, problem, factorChanged }: AccountPageHelpers): Route[] {
  /** A credential form about one of the account's passkeys (`id`). */
  async function passkeyForm(req: IncomingMessage, res: ServerResponse) {
    const form = await credentialForm(req, res);
    if (form && !isPasskeyId(form.fields['id'])) return void problem(res, 400, 'id must be a passkey id.');
    return form;
  }

  async function renamePasskeyForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await passkeyForm(req, res);
    if (!form) return;
    try {
      const renamed = await renamePasskey(dbOf(req), form.account.userId, form.fields['id']!, form.fields['label'] ?? '');
      if (!renamed) return problem(res, 404, 'You have no passkey with this id.');
    } catch (error) {
      if (error instanceof PasskeyError) return problem(res, 400, error.message);
      throw error;
    }
    seeOther(res, '/account?done=renamed');
  }

  async function removePasskeyForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await passkeyForm(req, res);
    if (!form) return;
    if (!(await removePasskey(dbOf(req), form.account.userId, form.fields['id']!)))
      return problem(res, 404, 'You have no passkey with this id.');
    factorChanged(req, form.account.userId, 'factor.removed', 'WEBAUTHN');
    seeOther(res, '/account?done=removed');
  }

  return [
    { path: '/account/passkeys/rename', methods: ['POST'], handler: renamePasskeyForm },
    { path: '/account/passkeys/remove', methods: ['POST'], handler: removePasskeyForm },
  ];
}
