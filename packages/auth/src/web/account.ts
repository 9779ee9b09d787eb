import type { IncomingMessage, ServerResponse } from 'node:http';
import { findUserById } from '@latchkey/db';
import { seeOther, sendHtml, type Route } from '@latchkey/http';
import type Provider from 'oidc-provider';
import { readProviderSession } from '../oidc/provider-session.js';
import { CREDENTIAL_CHANGE_STEP_UP, meetsStepUp } from '../principal/step-up.js';
import type { EndSessions } from '../sessions/index.js';
import { accountForms } from './account-forms.js';
import {
  ADD_PASSKEY_SCRIPT,
  passkeySection,
  passwordSection,
  recoveryCodeSection,
  rememberedBrowsersSection,
  totpSection,
  when,
} from './account-sections.js';
import { createAccountSessions } from './account-sessions.js';
import { readSessionFactors } from '../sign-in/index.js';
import { FORM_BODY_BYTES, type LoginContext } from './context.js';
import { readCookie } from './cookies.js';
import { describeFactors } from './factor-names.js';
import type { Factor } from '../factors/index.js';
import { sameOriginForm } from './form.js';
import { escapeHtml, page } from './html.js';
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

/** What the account page is drawn from: the login context, the options, who is signed in, its sessions section. */
interface AccountPageDeps {
  context: LoginContext;
  options: AccountRoutesOptions;
  signedIn(req: IncomingMessage, res: ServerResponse): Promise<SignedInAccount | null>;
  sessions: ReturnType<typeof createAccountSessions> | undefined;
}

/** The account page: who is signed in and how, then a section per way of signing in, sessions, history, sign-out. */
async function accountPage(
  { context: { origin, db, flow }, options, signedIn, sessions }: AccountPageDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
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
  const passkeys = await passkeySection(db, options.passkeysEnabled, account.userId);
  const totp = await totpSection(db, account.userId);
  const recoveryCodes = await recoveryCodeSection(db, account.userId);
  const password = await passwordSection(db, options.passwords, account);
  const sessionsSection = sessions ? await sessions.section(account) : '';
  const devices = await rememberedBrowsersSection(db, account.userId, readCookie(req, DEVICE_COOKIE));
  sendHtml(
    res,
    200,
    page(
      'Your account',
      `${done ? `<p role="status">${escapeHtml(done)}</p>` : ''}
<p>Signed in as <strong>${escapeHtml(account.email)}</strong> with ${escapeHtml(how)} at ${when(account.authTime * 1000)}.</p>
${passkeys}
${totp}
${recoveryCodes}
${password}
${sessionsSection}
${devices}
${await signInHistorySection(db, account.userId)}
${options.upstreamSection ? await options.upstreamSection(account.userId) : ''}
<h2>Sign out</h2>
<p><a href="/oidc/session/end">Sign out of Latchkey in this browser</a></p>`,
      options.passkeysEnabled ? ADD_PASSKEY_SCRIPT : '',
    ),
  );
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

  const pageDeps: AccountPageDeps = { context, options, signedIn, sessions };
  const forms = accountForms({
    db,
    totpKey: options.totpKey,
    issuer: options.issuer,
    passwords: options.passwords,
    credentialForm,
    problem,
    factorChanged,
  });
  const routes: Route[] = [
    { path: '/account', methods: ['GET', 'HEAD'], handler: (req, res) => accountPage(pageDeps, req, res) },
    ...Object.entries(forms).map(([path, handler]): Route => ({ path, methods: ['POST'], handler })),
    ...(sessions?.routes ?? []),
  ];
  return { routes, signedIn, credentialForm };
}
