import type { IncomingMessage, ServerResponse } from 'node:http';
import { findUserById } from '@latchkey/db';
import { seeOther, sendHtml, type Route } from '@latchkey/http';
import type Provider from 'oidc-provider';
import { readProviderSession } from '../oidc/provider-session.js';
import { isPasskeyId, listPasskeys, PasskeyError, removePasskey, renamePasskey, type PasskeySummary } from '../passkeys/index.js';
import { hasPassword, PasswordError, removePassword, setPassword } from '../password/index.js';
import { CREDENTIAL_CHANGE_STEP_UP, meetsStepUp } from '../principal/step-up.js';
import { countRecoveryCodes, generateRecoveryCodes } from '../recovery-codes/index.js';
import { listRememberedDevices, revokeRememberedDevice } from '../remembered-devices/index.js';
import type { EndSessions } from '../sessions/index.js';
import { createAccountSessions } from './account-sessions.js';
import { readSessionFactors } from '../sign-in/index.js';
import { confirmTotpEnrolment, hasConfirmedTotp, removeTotp, startTotpEnrolment, TotpError } from '../totp/index.js';
import { FORM_BODY_BYTES, PASSWORD_BODY_BYTES, type LoginContext } from './context.js';
import { readCookie } from './cookies.js';
import { describeFactors } from './factor-names.js';
import type { Factor } from '../factors/index.js';
import { sameOriginForm } from './form.js';
import { escapeHtml, page } from './html.js';
import { passwordSetupForm, recoveryCodesPage, totpSetupPage } from './setup-pages.js';
import { DEVICE_COOKIE, FACTORS_PAGE } from './sign-in-flow.js';
import { signInHistorySection } from './sign-in-history.js';

export interface AccountRoutesOptions {
  provider: Provider;
  /** whether passkeys are configured (RP ID): without them the page says so instead of offering one */
  passkeysEnabled: boolean;
  /** whether accounts may have a password (PASSWORDS). @default false */
  passwords?: boolean;
  /** the key TOTP secrets are sealed with */
  totpKey: Uint8Array;
  /** the name authenticator apps show for this service. @default 'Latchkey' */
  issuer?: string;
  /** the upstream OpenID provider's section (its linked identities), when one is configured */
  upstreamSection?: (userId: string) => Promise<string>;
  /** ends sessions (the sessions section lists them and ends others); undefined: no sessions section */
  endSessions?: EndSessions;
}

/** The account a provider session belongs to, when it may still use it. */
export interface SignedInAccount {
  userId: string;
  sessionUid: string;
  email: string;
  amr: string[];
  authTime: number;
}

/** What a finished action says on the page: fixed texts, chosen by a key (nothing from the URL is echoed). */
const DONE: Record<string, string> = {
  'totp-added': 'The authenticator app is set up. It is asked for where your account needs a second step.',
  'totp-removed': 'The authenticator app was removed.',
  'device-forgotten': 'The browser is no longer remembered: it asks for every step again.',
  'password-set': 'The password is set. It is asked for where your account needs a second step.',
  'password-removed': 'The password was removed.',
  'upstream-linked': 'The upstream account is linked: it signs you in here from now on.',
  'upstream-unlinked': 'The upstream account was unlinked. It no longer signs you in.',
  added: 'The passkey was added.',
  renamed: 'The passkey was renamed.',
  removed: 'The passkey was removed. It no longer signs you in.',
  'session-ended': 'The session was ended: that browser is signed out and its applications lose access within seconds.',
  'sessions-ended': 'Every other session was ended: only this browser is still signed in.',
};

const when = (date: Date | number) => `${new Date(date).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

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

/**
 * The provider's account page: who is signed in in this browser and how, their passkeys (add, rename,
 * remove) and sign-out. It runs on the provider's own session; a browser without one is sent to sign in.
 */
export function createAccountRoutes(context: LoginContext, options: AccountRoutesOptions) {
  const { origin, db, flow, audit } = context;
  const { provider } = options;

  /** A credential added to or removed from the signed-in account, by that account. */
  const factorChanged = (req: IncomingMessage, userId: string, type: 'factor.added' | 'factor.removed', factor: Factor) =>
    audit.record({ type, details: { factor }, actor: userId, subject: userId, request: req });

  /** The account signed in to the provider in this browser; null for none or a suspended one. */
  async function signedIn(req: IncomingMessage, res: ServerResponse): Promise<SignedInAccount | null> {
    const session = await readProviderSession(provider, req, res);
    if (!session) return null;
    const user = await findUserById(db, session.accountId);
    if (!user || user.suspended) return null;
    return { userId: user.id, sessionUid: session.sessionUid, email: user.email, amr: session.amr, authTime: session.authTime };
  }

  const problem = (res: ServerResponse, status: number, message: string) =>
    sendHtml(
      res,
      status,
      page('Your account', `<p class="error" role="alert">${escapeHtml(message)}</p><p><a href="/account">Back to your account</a></p>`),
    );

  const sessions = options.endSessions
    ? createAccountSessions(context, { signedIn, problem, endSessions: options.endSessions })
    : undefined;

  async function accountPage(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const account = await signedIn(req, res);
    // Default deny for pages: no provider session, no account page; sign in first.
    if (!account) return seeOther(res, '/login');
    // A factor past its validity (spec Multi-factor rules 2): the page needs it again before it shows anything.
    if (!(await flow.sessionMeets(account.sessionUid, account.userId, [], readCookie(req, DEVICE_COOKIE)))) {
      await flow.continueFromSession(req, res);
      return seeOther(res, FACTORS_PAGE);
    }
    const done = DONE[new URL(req.url ?? '/', origin).searchParams.get('done') ?? ''];
    const how = describeFactors((await readSessionFactors(db, account.sessionUid, account.userId)) ?? []) || 'an earlier sign-in';
    const passkeys = options.passkeysEnabled ? await listPasskeys(db, account.userId) : [];
    const passkeySection = options.passkeysEnabled
      ? `<h2>Passkeys</h2>
${passkeys.length ? `<ul id="passkeys">${passkeys.map(passkeyItem).join('\n')}</ul>` : '<p>You have no passkeys yet.</p>'}
<form id="add-passkey">
<label for="new-label">Name for a new passkey (optional)</label>
<input id="new-label" name="label" maxlength="64" autocomplete="off">
<button type="submit">Add a passkey</button>
</form>
<p id="add-error" class="error" role="alert"></p>`
      : '<h2>Passkeys</h2><p>Passkeys are not configured on this server.</p>';
    const totp = await hasConfirmedTotp(db, account.userId);
    const totpSection = `<h2>Authenticator app</h2>
${
  totp
    ? '<p>An authenticator app is set up.</p><form method="post" action="/account/totp/remove"><button type="submit">Remove the authenticator app</button></form>'
    : '<p>No authenticator app is set up.</p><form method="post" action="/account/totp/setup"><button type="submit">Set up an authenticator app</button></form>'
}`;
    const recoverySection = `<h2>Recovery codes</h2>
<p id="recovery-left">${await countRecoveryCodes(db, account.userId)} recovery codes left.</p>
<form method="post" action="/account/recovery-codes"><button type="submit">Make new recovery codes</button></form>`;
    const passwordSection = !options.passwords
      ? ''
      : (await hasPassword(db, account.userId))
        ? `<h2>Password</h2>
<p id="password-status">A password is set. It is only ever asked as a later step of a sign-in, never as the only one.</p>
${passwordSetupForm('/account/password', account.email, 'Change the password')}
<form method="post" action="/account/password/remove"><button type="submit">Remove the password</button></form>`
        : `<h2>Password</h2>
<p id="password-status">No password is set. A password is only ever asked as a later step of a sign-in, never as the only one.</p>
${passwordSetupForm('/account/password', account.email, 'Set a password')}`;
    const sessionsSection = sessions ? await sessions.section(account) : '';
    const devices = await listRememberedDevices(db, account.userId, readCookie(req, DEVICE_COOKIE));
    const devicesSection = `<h2>Remembered browsers</h2>
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
    sendHtml(
      res,
      200,
      page(
        'Your account',
        `${done ? `<p role="status">${escapeHtml(done)}</p>` : ''}
<p>Signed in as <strong>${escapeHtml(account.email)}</strong> with ${escapeHtml(how)} at ${when(account.authTime * 1000)}.</p>
${passkeySection}
${totpSection}
${recoverySection}
${passwordSection}
${sessionsSection}
${devicesSection}
${await signInHistorySection(db, account.userId)}
${options.upstreamSection ? await options.upstreamSection(account.userId) : ''}
<h2>Sign out</h2>
<p><a href="/oidc/session/end">Sign out of Latchkey in this browser</a></p>`,
        options.passkeysEnabled ? ADD_PASSKEY_SCRIPT : '',
      ),
    );
  }

  /**
   * A same-origin form post by the signed-in account whose sign-in is recent enough to change its credentials,
   * or undefined once the refusal has been sent.
   */
  async function credentialForm(
    req: IncomingMessage,
    res: ServerResponse,
    bodyBytes = FORM_BODY_BYTES,
  ): Promise<{ account: SignedInAccount; fields: Record<string, string> } | undefined> {
    const fields = await sameOriginForm(req, res, origin, (_req, refused, status, message) => problem(refused, status, message), bodyBytes);
    if (!fields) return;
    const account = await signedIn(req, res);
    if (!account || !(await flow.sessionMeets(account.sessionUid, account.userId, [], readCookie(req, DEVICE_COOKIE)))) {
      return void problem(res, 401, 'You are not signed in, or your sign-in needs renewing. Sign in and try again.');
    }
    // Every credential change needs a recent sign-in, so a stolen session cannot plant a lasting way back in.
    if (!meetsStepUp({ authTime: account.authTime }, CREDENTIAL_CHANGE_STEP_UP)) {
      return void problem(
        res,
        401,
        `Changing how you sign in needs a sign-in from the last ${CREDENTIAL_CHANGE_STEP_UP.maxAge! / 60} minutes. Sign out, sign in again and retry.`,
      );
    }
    return { account, fields };
  }

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
      const renamed = await renamePasskey(db, form.account.userId, form.fields['id']!, form.fields['label'] ?? '');
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
    if (!(await removePasskey(db, form.account.userId, form.fields['id']!))) return problem(res, 404, 'You have no passkey with this id.');
    factorChanged(req, form.account.userId, 'factor.removed', 'WEBAUTHN');
    seeOther(res, '/account?done=removed');
  }

  async function totpSetupForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    try {
      const enrolment = await startTotpEnrolment(db, options.totpKey, {
        userId: form.account.userId,
        accountName: form.account.email,
        issuer: options.issuer ?? 'Latchkey',
      });
      sendHtml(res, 200, totpSetupPage(enrolment, '/account/totp/confirm'));
    } catch (error) {
      if (error instanceof TotpError) return problem(res, 409, error.message);
      throw error;
    }
  }

  async function totpConfirmForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    try {
      await confirmTotpEnrolment(db, options.totpKey, { userId: form.account.userId, code: (form.fields['code'] ?? '').trim() });
    } catch (error) {
      if (error instanceof TotpError) return problem(res, 400, error.message);
      throw error;
    }
    factorChanged(req, form.account.userId, 'factor.added', 'TOTP');
    seeOther(res, '/account?done=totp-added');
  }

  async function totpRemoveForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    if (!(await removeTotp(db, form.account.userId))) return problem(res, 404, 'No authenticator app is set up for this account.');
    factorChanged(req, form.account.userId, 'factor.removed', 'TOTP');
    seeOther(res, '/account?done=totp-removed');
  }

  async function recoveryCodesForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    const codes = await generateRecoveryCodes(db, form.account.userId);
    factorChanged(req, form.account.userId, 'factor.added', 'RECOVERY_CODE');
    sendHtml(res, 200, recoveryCodesPage(codes, '/account'));
  }

  async function forgetDeviceForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    if (!(await revokeRememberedDevice(db, form.account.userId, form.fields['id'] ?? '')))
      return problem(res, 404, 'This browser is not remembered for your account.');
    seeOther(res, '/account?done=device-forgotten');
  }

  /** Sets or changes the password (`password`, `confirm`): a credential change, so a recent sign-in. */
  async function setPasswordForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!options.passwords) return problem(res, 404, 'Passwords are switched off on this server.');
    const form = await credentialForm(req, res, PASSWORD_BODY_BYTES);
    if (!form) return;
    const password = form.fields['password'] ?? '';
    if (password.length === 0) return problem(res, 400, 'password is required.');
    if (form.fields['confirm'] !== password) return problem(res, 400, 'The two passwords differ.');
    try {
      await setPassword(db, { userId: form.account.userId, email: form.account.email, password });
    } catch (error) {
      if (error instanceof PasswordError) return problem(res, 400, error.message);
      throw error;
    }
    factorChanged(req, form.account.userId, 'factor.added', 'PASSWORD');
    seeOther(res, '/account?done=password-set');
  }

  async function removePasswordForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!options.passwords) return problem(res, 404, 'Passwords are switched off on this server.');
    const form = await credentialForm(req, res);
    if (!form) return;
    if (!(await removePassword(db, form.account.userId))) return problem(res, 404, 'No password is set for this account.');
    factorChanged(req, form.account.userId, 'factor.removed', 'PASSWORD');
    seeOther(res, '/account?done=password-removed');
  }

  const forms = {
    '/account/passkeys/rename': renamePasskeyForm,
    '/account/passkeys/remove': removePasskeyForm,
    '/account/totp/setup': totpSetupForm,
    '/account/totp/confirm': totpConfirmForm,
    '/account/totp/remove': totpRemoveForm,
    '/account/recovery-codes': recoveryCodesForm,
    '/account/devices/forget': forgetDeviceForm,
    '/account/password': setPasswordForm,
    '/account/password/remove': removePasswordForm,
  };
  const routes: Route[] = [
    { path: '/account', methods: ['GET', 'HEAD'], handler: accountPage },
    ...Object.entries(forms).map(([path, handler]): Route => ({ path, methods: ['POST'], handler })),
    ...(sessions?.routes ?? []),
  ];
  return { routes, signedIn, credentialForm };
}
