import type { Database } from '@latchkey/db';
import { listPasskeys, type PasskeySummary } from '../passkeys/index.js';
import { hasPassword } from '../password/index.js';
import { countRecoveryCodes } from '../recovery-codes/index.js';
import { listRememberedDevices } from '../remembered-devices/index.js';
import { hasConfirmedTotp } from '../totp/index.js';
import { escapeHtml } from './html.js';
import { passwordSetupForm } from './setup-pages.js';

export const when = (date: Date | number) => `${new Date(date).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** "Add a passkey": the browser's own JSON helpers for WebAuthn, the provider session as the credential. */
export const ADD_PASSKEY_SCRIPT = `document.getElementById('add-passkey').addEventListener('submit', async (event) => {
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
export async function passkeySection(db: Database, passkeysEnabled: boolean, userId: string): Promise<string> {
  const passkeys = passkeysEnabled ? await listPasskeys(db, userId) : [];
  return passkeysEnabled
    ? `<h2>Passkeys</h2>
${passkeys.length ? `<ul id="passkeys">${passkeys.map(passkeyItem).join('\n')}</ul>` : '<p>You have no passkeys yet.</p>'}
<form id="add-passkey">
<label for="new-label">Name for a new passkey (optional)</label>
<input id="new-label" name="label" maxlength="64" autocomplete="off">
<button type="submit">Add a passkey</button>
</form>
<p id="add-error" class="error" role="alert"></p>`
    : '<h2>Passkeys</h2><p>Passkeys are not configured on this server.</p>';
}

/** Whether an authenticator app is set up, and the form that removes it or sets one up. */
export async function totpSection(db: Database, userId: string): Promise<string> {
  const totp = await hasConfirmedTotp(db, userId);
  return `<h2>Authenticator app</h2>
${
  totp
    ? '<p>An authenticator app is set up.</p><form method="post" action="/account/totp/remove"><button type="submit">Remove the authenticator app</button></form>'
    : '<p>No authenticator app is set up.</p><form method="post" action="/account/totp/setup"><button type="submit">Set up an authenticator app</button></form>'
}`;
}

/** How many recovery codes are left, and the form that makes new ones. */
export const recoveryCodeSection = async (db: Database, userId: string): Promise<string> => `<h2>Recovery codes</h2>
<p id="recovery-left">${await countRecoveryCodes(db, userId)} recovery codes left.</p>
<form method="post" action="/account/recovery-codes"><button type="submit">Make new recovery codes</button></form>`;

/** Whether a password is set, and the forms that set, change or remove it; nothing when passwords are switched off. */
export async function passwordSection(
  db: Database,
  passwords: boolean | undefined,
  account: { userId: string; email: string },
): Promise<string> {
  return !passwords
    ? ''
    : (await hasPassword(db, account.userId))
      ? `<h2>Password</h2>
<p id="password-status">A password is set. It is only ever asked as a later step of a sign-in, never as the only one.</p>
${passwordSetupForm('/account/password', account.email, 'Change the password')}
<form method="post" action="/account/password/remove"><button type="submit">Remove the password</button></form>`
      : `<h2>Password</h2>
<p id="password-status">No password is set. A password is only ever asked as a later step of a sign-in, never as the only one.</p>
${passwordSetupForm('/account/password', account.email, 'Set a password')}`;
}

/** The browsers remembered for the account (this one marked, by its `deviceToken`), each with a form that forgets it. */
export async function rememberedBrowsersSection(db: Database, userId: string, deviceToken: string | undefined): Promise<string> {
  const devices = await listRememberedDevices(db, userId, deviceToken);
  return `<h2>Remembered browsers</h2>
${
  devices.length
    ? `<ul id="devices">${devices
        .map(
          (
            device,
          ) => `<li><strong>${escapeHtml(device.label)}</strong>${device.current ? ' (this browser)' : ''} <small>since ${when(device.createdAt)}${device.lastUsedAt ? `, last used ${when(device.lastUsedAt)}` : ''}, until ${when(device.expiresAt)}</small>
<form method="post" action="/account/devices/forget"><input type="hidden" name="id" value="${escapeHtml(device.id)}"><button type="submit">Forget${device.current ? ' this browser' : ''}</button></form></li>`,
        )
        .join('\n')}</ul>`
    : '<p>No browser is remembered. A remembered browser skips the second step of signing in, never the first.</p>'
}`;
}
