import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Database } from '@latchkey/db';
import { seeOther, sendHtml } from '@latchkey/http';
import type { Factor } from '../factors/index.js';
import { isPasskeyId, PasskeyError, removePasskey, renamePasskey } from '../passkeys/index.js';
import { PasswordError, removePassword, setPassword } from '../password/index.js';
import { generateRecoveryCodes } from '../recovery-codes/index.js';
import { revokeRememberedDevice } from '../remembered-devices/index.js';
import { confirmTotpEnrolment, removeTotp, startTotpEnrolment, TotpError } from '../totp/index.js';
import { PASSWORD_BODY_BYTES } from './context.js';
import { recoveryCodesPage, totpSetupPage } from './setup-pages.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** What the account page's credential forms share with the page: the database, its options and its helpers. */
export interface AccountFormsDeps {
  db: Database;
  /** the key TOTP secrets are sealed with */
  totpKey: Uint8Array;
  /** the name authenticator apps show for this service. @default 'Latchkey' */
  issuer?: string;
  /** whether accounts may have a password. @default false */
  passwords?: boolean;
  /** a same-origin form post by the signed-in account, recent enough to change its credentials; undefined once refused */
  credentialForm(
    req: IncomingMessage,
    res: ServerResponse,
    bodyBytes?: number,
  ): Promise<{ account: { userId: string; email: string }; fields: Record<string, string> } | undefined>;
  problem(res: ServerResponse, status: number, message: string): void;
  /** records a credential added to or removed from the signed-in account, by that account */
  factorChanged(req: IncomingMessage, userId: string, type: 'factor.added' | 'factor.removed', factor: Factor): void;
}

/** Renames or removes one of the account's passkeys (`id`). */
function passkeyForms({ db, credentialForm, problem, factorChanged }: AccountFormsDeps): Record<string, Handler> {
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

  return { '/account/passkeys/rename': renamePasskeyForm, '/account/passkeys/remove': removePasskeyForm };
}

/** Sets up (then confirms) or removes the account's authenticator app. */
function totpForms({ db, totpKey, issuer, credentialForm, problem, factorChanged }: AccountFormsDeps): Record<string, Handler> {
  async function totpSetupForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    try {
      const enrolment = await startTotpEnrolment(db, totpKey, {
        userId: form.account.userId,
        accountName: form.account.email,
        issuer: issuer ?? 'Latchkey',
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
      await confirmTotpEnrolment(db, totpKey, { userId: form.account.userId, code: (form.fields['code'] ?? '').trim() });
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

  return { '/account/totp/setup': totpSetupForm, '/account/totp/confirm': totpConfirmForm, '/account/totp/remove': totpRemoveForm };
}

/** Makes new recovery codes (the old ones stop working) and shows them once. */
function recoveryCodeForms({ db, credentialForm, factorChanged }: AccountFormsDeps): Record<string, Handler> {
  async function recoveryCodesForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    const codes = await generateRecoveryCodes(db, form.account.userId);
    factorChanged(req, form.account.userId, 'factor.added', 'RECOVERY_CODE');
    sendHtml(res, 200, recoveryCodesPage(codes, '/account'));
  }

  return { '/account/recovery-codes': recoveryCodesForm };
}

/** Forgets one of the browsers remembered for the account (`id`). */
function rememberedBrowserForms({ db, credentialForm, problem }: AccountFormsDeps): Record<string, Handler> {
  async function forgetDeviceForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await credentialForm(req, res);
    if (!form) return;
    if (!(await revokeRememberedDevice(db, form.account.userId, form.fields['id'] ?? '')))
      return problem(res, 404, 'This browser is not remembered for your account.');
    seeOther(res, '/account?done=device-forgotten');
  }

  return { '/account/devices/forget': forgetDeviceForm };
}

/** Sets, changes or removes the account's password (switched off unless `passwords`). */
function passwordForms({ db, passwords, credentialForm, problem, factorChanged }: AccountFormsDeps): Record<string, Handler> {
  /** Sets or changes the password (`password`, `confirm`): a credential change, so a recent sign-in. */
  async function setPasswordForm(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!passwords) return problem(res, 404, 'Passwords are switched off on this server.');
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
    if (!passwords) return problem(res, 404, 'Passwords are switched off on this server.');
    const form = await credentialForm(req, res);
    if (!form) return;
    if (!(await removePassword(db, form.account.userId))) return problem(res, 404, 'No password is set for this account.');
    factorChanged(req, form.account.userId, 'factor.removed', 'PASSWORD');
    seeOther(res, '/account?done=password-removed');
  }

  return { '/account/password': setPasswordForm, '/account/password/remove': removePasswordForm };
}

/** The account page's credential forms, by path: passkeys, authenticator app, recovery codes, remembered browsers, password. */
export const accountForms = (deps: AccountFormsDeps): Record<string, Handler> => ({
  ...passkeyForms(deps),
  ...totpForms(deps),
  ...recoveryCodeForms(deps),
  ...rememberedBrowserForms(deps),
  ...passwordForms(deps),
});
