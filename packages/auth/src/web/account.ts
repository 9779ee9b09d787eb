import type { IncomingMessage, ServerResponse } from 'node:http';
import { findUserById } from '@latchkey/db';
import { seeOther, sendHtml, type Route } from '@latchkey/http';
import type Provider from 'oidc-provider';
import { readProviderSession } from '../oidc/provider-session.js';
import { CREDENTIAL_CHANGE_STEP_UP, meetsStepUp } from '../principal/step-up.js';
import type { EndSessions, RevokeApp } from '../sessions/index.js';
import { readSessionFactors } from '../sign-in/index.js';
import { createAccountApps } from './account-apps.js';
import { createAccountSessions } from './account-sessions.js';
import { FORM_BODY_BYTES, type LoginContext } from './context.js';
import { readCookie } from './cookies.js';
import type { AccountPageHelpers, SignedInAccount } from './factor-module.js';
import { describeFactors } from './factor-names.js';
import type { RegisteredWeb } from './factor-pages.js';
import { scriptsOf } from './factor-pages.js';
import { sameOriginForm } from './form.js';
import { escapeHtml, page, when } from './html.js';
import { forgetBrowserForm, rememberedBrowsersSection } from './remembered-browsers.js';
import { DEVICE_COOKIE, FACTORS_PAGE } from './sign-in-flow.js';
import { signInHistorySection } from './sign-in-history.js';

export interface AccountRoutesOptions {
  provider: Provider;
  /** ends sessions (the sessions section lists them and ends others); undefined: no sessions section */
  endSessions?: EndSessions;
  /** the factors' pages, whose account sections and texts the page shows (read when the page is drawn) */
  webs: readonly RegisteredWeb[];
  /** revokes a third-party app (the Connected apps section); undefined: no such section */
  revokeApp?: RevokeApp;
}

/** What the account page says of what it does itself once done: fixed texts, chosen by a key (nothing from the URL is echoed). */
const DONE: Record<string, string> = {
  'device-forgotten': 'The browser is no longer remembered: it asks for every step again.',
  'session-ended': 'The session was ended: that browser is signed out and its applications lose access within seconds.',
  'sessions-ended': 'Every other session was ended: only this browser is still signed in.',
  'app-revoked': 'The app was disconnected: it can no longer refresh its access, and its tokens are refused within seconds.',
};

/** What the account page is drawn from: the login context, the options, who is signed in, its sessions section. */
interface AccountPageDeps {
  context: LoginContext;
  options: AccountRoutesOptions;
  signedIn(req: IncomingMessage, res: ServerResponse): Promise<SignedInAccount | null>;
  sessions: ReturnType<typeof createAccountSessions> | undefined;
  apps: ReturnType<typeof createAccountApps> | undefined;
}

/** The text of `/account?done=<key>`: the page's own, or a factor's. */
function doneText({ webs }: AccountRoutesOptions, key: string): string | undefined {
  if (Object.hasOwn(DONE, key)) return DONE[key];
  for (const { web } of webs) if (web.accountDone && Object.hasOwn(web.accountDone, key)) return web.accountDone[key];
  return undefined;
}

/** The account page: who is signed in and how, then a section per way of signing in, sessions, history, sign-out. */
async function accountPage(
  { context: { origin, dbOf, flow, factors }, options, signedIn, sessions, apps }: AccountPageDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const account = await signedIn(req, res);
  // Default deny for pages: no provider session, no account page; sign in first.
  if (!account) return seeOther(res, '/login');
  const db = dbOf(req);
  // A factor past its validity (spec Multi-factor rules 2): the page needs it again before it shows anything.
  if (!(await flow.sessionMeets(db, account.sessionUid, account.userId, [], readCookie(req, DEVICE_COOKIE)))) {
    await flow.continueFromSession(req, res);
    return seeOther(res, FACTORS_PAGE);
  }
  const done = doneText(options, new URL(req.url ?? '/', origin).searchParams.get('done') ?? '');
  const how = describeFactors(factors, (await readSessionFactors(db, account.sessionUid, account.userId)) ?? []) || 'an earlier sign-in';
  const sections = [];
  for (const { web } of options.webs) if (web.accountSection) sections.push(await web.accountSection(account, req));
  const sessionsSection = sessions ? await sessions.section(req, account) : '';
  const appsSection = apps ? await apps.section(req, account) : '';
  const devices = await rememberedBrowsersSection(db, account.userId, readCookie(req, DEVICE_COOKIE));
  sendHtml(
    res,
    200,
    page(
      'Your account',
      `${done ? `<p role="status">${escapeHtml(done)}</p>` : ''}
<p>Signed in as <strong>${escapeHtml(account.email)}</strong> with ${escapeHtml(how)} at ${when(account.authTime * 1000)}.</p>
${sections.map((section) => section.html).join('\n')}
${sessionsSection}
${appsSection}
${devices}
${await signInHistorySection(db, factors, account.userId)}
<h2>Sign out</h2>
<p><a href="/oidc/session/end">Sign out of Latchkey in this browser</a></p>`,
      scriptsOf(sections),
    ),
  );
}
/**
 * The provider's account page: who is signed in in this browser and how, their passkeys (add, rename,
 * remove) and sign-out. It runs on the provider's own session; a browser without one is sent to sign in.
 */
export function createAccountRoutes(context: LoginContext, options: AccountRoutesOptions) {
  const { origin, dbOf, inProvider, flow, audit } = context;
  const { provider } = options;

  /** A credential added to or removed from the signed-in account, by that account. */
  const factorChanged: AccountPageHelpers['factorChanged'] = (req, userId, type, factor) =>
    audit.record({ type, details: { factor }, actor: userId, subject: userId, request: req });

  /** The account signed in to the provider in this browser; null for none or a suspended one. */
  async function signedIn(req: IncomingMessage, res: ServerResponse): Promise<SignedInAccount | null> {
    const session = await inProvider(req, () => readProviderSession(provider, req, res));
    if (!session) return null;
    const user = await findUserById(dbOf(req), session.accountId);
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
    if (!account || !(await flow.sessionMeets(dbOf(req), account.sessionUid, account.userId, [], readCookie(req, DEVICE_COOKIE)))) {
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

  const apps = options.revokeApp ? createAccountApps(context, { signedIn, problem, revokeApp: options.revokeApp, provider }) : undefined;

  const pageDeps: AccountPageDeps = { context, options, signedIn, sessions, apps };
  const helpers: AccountPageHelpers = { signedIn, credentialForm, problem, factorChanged };
  const routes: Route[] = [
    { path: '/account', methods: ['GET', 'HEAD'], handler: (req, res) => accountPage(pageDeps, req, res) },
    forgetBrowserForm(context, helpers),
    ...(sessions?.routes ?? []),
    ...(apps?.routes ?? []),
  ];
  return { routes, helpers };
}
