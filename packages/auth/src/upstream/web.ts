import type { IncomingMessage, ServerResponse } from 'node:http';
import { seeOther, sendHtml, sendHttpError, type Attempt, type Route } from '@latchkey/http';
import {
  createUpstreamRelyingParty,
  deriveUpstreamRequestKey,
  findLinkedUser,
  linkFederatedIdentity,
  listFederatedIdentities,
  openUpstreamRequest,
  sealUpstreamRequest,
  unlinkFederatedIdentity,
  UPSTREAM_REQUEST_TTL_SECONDS,
  UpstreamError,
  type UpstreamIdentity,
  type UpstreamPurpose,
  type UpstreamRelyingParty,
  type UpstreamConfig,
} from './index.js';
import type { LoginContext } from '../web/context.js';
import { clearCookie, readCookie, setCookie } from '../web/cookies.js';
import type { AccountPageHelpers, FactorWeb, FactorWebDeps, PagePart } from '../web/factor-module.js';
import { escapeHtml, page, when } from '../web/html.js';
import { DEVICE_COOKIE } from '../web/sign-in-flow.js';

/**
 * The authorization request this browser sent to the upstream provider (state, nonce, PKCE verifier, purpose),
 * sealed with AES-256-GCM: HttpOnly, SameSite=Lax (the callback is a top-level GET from the upstream provider),
 * scoped to /login/upstream, 10 minutes. Cleared by the first callback whatever its outcome.
 */
export const UPSTREAM_COOKIE = 'lk_upstream';
const COOKIE_PATH = '/login/upstream';
export const UPSTREAM_CALLBACK_PATH = '/login/upstream/callback';

interface UpstreamRoutesOptions {
  /** the same source counters as the one-time token (every callback is an attempt, every refusal a failure) */
  limits: FactorWebDeps['limits'];
  upstream: UpstreamConfig;
  /** the account page's: who is signed in, and its credential-changing forms (same origin, recent sign-in) */
  account: AccountPageHelpers;
}

/** The upstream routes: path, method. */
const UPSTREAM_ROUTES = [
  ['/login/upstream', 'GET'],
  [UPSTREAM_CALLBACK_PATH, 'GET'],
  ['/account/upstream/link', 'POST'],
  ['/account/upstream/unlink', 'POST'],
] as const;

/** Without an upstream provider, its routes answer 404 saying so, whatever the method. */
function upstreamRoutesOff(): Route[] {
  const off: Route['handler'] = (_req, res) =>
    sendHttpError(res, 404, 'No upstream OpenID provider is configured on this server (set UPSTREAM_ISSUER).');
  return UPSTREAM_ROUTES.map(([path]) => ({ path, methods: 'any', handler: off }));
}

/**
 * What a refusal's cause says, for logs: its name, code and message only. The causes openid-client attaches
 * carry the callback's parameters (a live authorization code when the state did not match) and response bodies.
 */
function reasonOf(error: UpstreamError): string {
  const cause = error.cause;
  if (!(cause instanceof Error)) return error.code;
  const code = (cause as { code?: unknown }).code;
  return `${cause.name}${typeof code === 'string' ? ` ${code}` : ''}: ${cause.message}`;
}

/** What the upstream routes share: the login context, their options, and what is derived from them once. */
interface UpstreamDeps {
  context: LoginContext;
  options: UpstreamRoutesOptions;
  requestKey: Uint8Array;
  party: UpstreamRelyingParty;
  /** the provider's name, escaped for HTML */
  name: string;
}

function problem(
  { options }: UpstreamDeps,
  res: ServerResponse,
  status: number,
  message: string,
  back: 'login' | 'account',
  headers: Record<string, string> = {},
): void {
  const link = back === 'login' ? '<a href="/login">Start again</a>' : '<a href="/account">Back to your account</a>';
  sendHtml(
    res,
    status,
    page(`Sign in with ${options.upstream.name}`, `<p class="error" role="alert">${escapeHtml(message)}</p><p>${link}</p>`),
    headers,
  );
}

/** A new authorization request at the upstream provider; the browser keeps it sealed. Null once refused. */
async function begin(
  deps: UpstreamDeps,
  res: ServerResponse,
  purpose: UpstreamPurpose,
  back: 'login' | 'account',
  userId?: string,
): Promise<string | null> {
  const { upstream } = deps.options;
  try {
    const { url, request } = await deps.party.start(purpose, userId);
    setCookie(res, UPSTREAM_COOKIE, sealUpstreamRequest(deps.requestKey, request), {
      path: COOKIE_PATH,
      maxAgeSeconds: UPSTREAM_REQUEST_TTL_SECONDS,
      secure: deps.context.secure,
    });
    return url;
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    deps.context.log.warn({ issuer: upstream.issuer, reason: reasonOf(error) }, 'upstream provider unavailable');
    problem(deps, res, 502, `${upstream.name} cannot be reached right now. Try again shortly.`, back);
    return null;
  }
}

/** GET /login/upstream: off to the upstream provider (a link, not a form: the pages' CSP allows form posts to this origin only). */
async function start(deps: UpstreamDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = await begin(deps, res, 'sign-in', 'login');
  if (url) deps.context.audit.record({ type: 'sign_in.started', details: { method: 'AUTHORIZATION_CODE' }, request: req });
  if (url) seeOther(res, url);
}

/**
 * GET /login/upstream/callback: the upstream provider sends the browser back. Single use (the sealed request
 * is cleared first), checked against this browser's request (state), the code redeemed with its PKCE verifier
 * and the ID token verified (nonce, issuer, audience, signature). Every callback counts against its source.
 */
async function callback(deps: UpstreamDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { secure, dbOf, flow, log, gate } = deps.context;
  const { limits, upstream } = deps.options;
  const sealed = readCookie(req, UPSTREAM_COOKIE);
  clearCookie(res, UPSTREAM_COOKIE, { path: COOKIE_PATH, secure });
  const attempt = await gate.attempt(req, res, limits, (status, message, headers) => problem(deps, res, status, message, 'login', headers));
  if (!attempt) return;
  const { ip } = attempt;
  const pending = openUpstreamRequest(deps.requestKey, sealed);
  if (!pending) {
    await attempt.failed();
    return problem(
      deps,
      res,
      400,
      `No sign-in with ${upstream.name} is in progress in this browser, or it has expired or been used. Start again.`,
      'login',
    );
  }
  const back = pending.purpose === 'link' ? 'account' : 'login';
  const rawUrl = req.url ?? '';
  const query = rawUrl.includes('?') ? rawUrl.slice(rawUrl.indexOf('?')) : '';
  let identity: UpstreamIdentity;
  try {
    identity = await deps.party.finish(query, pending);
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    log.warn({ ip, code: error.code, upstreamError: error.upstreamError, reason: reasonOf(error) }, 'upstream sign-in refused');
    if (error.code === 'UPSTREAM_UNAVAILABLE')
      return problem(deps, res, 502, `${upstream.name} cannot be reached right now. Try again shortly.`, back);
    await attempt.failed();
    if (error.code === 'UPSTREAM_DENIED') return problem(deps, res, 401, `The sign-in at ${upstream.name} was cancelled or refused.`, back);
    return problem(
      deps,
      res,
      400,
      `The answer from ${upstream.name} does not belong to a sign-in started in this browser, or it was used already. Start again.`,
      back,
    );
  }
  if (pending.purpose === 'link') return finishLink(deps, req, res, attempt, pending.userId!, identity);

  const userId = await findLinkedUser(dbOf(req), identity.issuer, identity.subject);
  if (!userId) {
    // Never by e-mail: an account with the address the upstream provider reports is not this identity's.
    await attempt.failed();
    return problem(
      deps,
      res,
      401,
      `This ${upstream.name} account is not linked to an account here. Sign in another way, then link it from your account page.`,
      'login',
    );
  }
  await attempt.succeeded();
  seeOther(res, await flow.proveFactor(req, res, userId, 'AUTHORIZATION_CODE'));
}

/** The callback of a link: the account that asked must still be the one signed in here. */
async function finishLink(
  deps: UpstreamDeps,
  req: IncomingMessage,
  res: ServerResponse,
  attempt: Attempt,
  userId: string,
  identity: { issuer: string; subject: string },
): Promise<void> {
  const { flow } = deps.context;
  const db = deps.context.dbOf(req);
  const { upstream } = deps.options;
  const account = await deps.options.account.signedIn(req, res);
  if (
    !account ||
    account.userId !== userId ||
    !(await flow.sessionMeets(db, account.sessionUid, account.userId, [], readCookie(req, DEVICE_COOKIE)))
  ) {
    await attempt.failed();
    return problem(
      deps,
      res,
      401,
      'The account that asked for this link is no longer signed in in this browser. Sign in and try again.',
      'account',
    );
  }
  try {
    await linkFederatedIdentity(db, { issuer: identity.issuer, subject: identity.subject, userId });
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    await attempt.failed();
    if (error.code === 'UPSTREAM_LINKED_ELSEWHERE')
      return problem(
        deps,
        res,
        409,
        `This ${upstream.name} account is already linked to another account. Unlink it there first.`,
        'account',
      );
    return problem(deps, res, 400, `The identity ${upstream.name} sent cannot be linked.`, 'account');
  }
  await attempt.succeeded();
  seeOther(res, '/account?done=upstream-linked');
}

/**
 * POST /account/upstream/link: a credential change (same origin, a recent sign-in). Answers with a page that
 * continues to the upstream provider: the pages' CSP (form-action 'self') would stop a form's redirect there.
 */
async function linkForm(deps: UpstreamDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { name } = deps;
  const form = await deps.options.account.credentialForm(req, res);
  if (!form) return;
  const url = await begin(deps, res, 'link', 'account', form.account.userId);
  if (!url) return;
  sendHtml(
    res,
    200,
    page(
      `Link ${deps.options.upstream.name}`,
      `<p>Sign in at ${name} with the account to link to <strong>${escapeHtml(form.account.email)}</strong>.</p>
<p><a id="continue" href="${escapeHtml(url)}">Continue to ${name}</a></p>`,
      `location.replace(document.getElementById('continue').href);`,
    ),
  );
}

/** POST /account/upstream/unlink: a credential change; `issuer` and `subject` name one of the account's links. */
async function unlinkForm(deps: UpstreamDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await deps.options.account.credentialForm(req, res);
  if (!form) return;
  const identity = { issuer: form.fields['issuer'] ?? '', subject: form.fields['subject'] ?? '', userId: form.account.userId };
  if (!(await unlinkFederatedIdentity(deps.context.dbOf(req), identity)))
    return problem(deps, res, 404, `No such ${deps.options.upstream.name} account is linked to yours.`, 'account');
  seeOther(res, '/account?done=upstream-unlinked');
}

/** The account page's section: the linked upstream identities, unlink, and link another. */
async function accountSection({ context, name }: UpstreamDeps, req: IncomingMessage, userId: string): Promise<PagePart> {
  const linked = await listFederatedIdentities(context.dbOf(req), userId);
  const items = linked
    .map(
      (
        identity,
      ) => `<li><strong>${escapeHtml(identity.subject)}</strong> at ${escapeHtml(identity.issuer)} <small>linked ${when(identity.createdAt)}</small>
<form method="post" action="/account/upstream/unlink"><input type="hidden" name="issuer" value="${escapeHtml(identity.issuer)}"><input type="hidden" name="subject" value="${escapeHtml(identity.subject)}"><button type="submit">Unlink</button></form></li>`,
    )
    .join('\n');
  return {
    html: `<h2>${name}</h2>
${linked.length ? `<ul id="linked-identities">${items}</ul>` : `<p>No ${name} account is linked: it cannot sign you in yet.</p>`}
<form method="post" action="/account/upstream/link"><button type="submit">Link a ${name} account</button></form>`,
  };
}

/**
 * "Sign in with <provider>": a link, not a form (the pages' CSP lets forms post to this origin only, and the
 * sign-in goes on at the upstream provider).
 */
const signInLink = (name: string): PagePart => ({
  html: `<p><a id="upstream" href="/login/upstream">Sign in with ${escapeHtml(name)}</a></p>`,
});

/** What the account page says once a link or an unlink is done. */
const ACCOUNT_DONE = {
  'upstream-linked': 'The upstream account is linked: it signs you in here from now on.',
  'upstream-unlinked': 'The upstream account was unlinked. It no longer signs you in.',
};

/**
 * Signing in through an upstream OpenID provider (factor AUTHORIZATION_CODE, amr `fed`) and linking its
 * identities to accounts. Accounts are found by the verified ID token's (iss, sub) only, never by e-mail: an
 * identity nobody linked signs nobody in and creates nothing. Linking starts on the account page. Without an
 * upstream provider (UPSTREAM_ISSUER), its routes answer 404 and no page offers it.
 */
export function createUpstreamWeb({ context, settings, limits, account }: FactorWebDeps): FactorWeb {
  const { upstream } = settings;
  if (!upstream) return { routes: upstreamRoutesOff() };
  const options: UpstreamRoutesOptions = { limits, upstream, account };
  const party = createUpstreamRelyingParty({
    issuer: upstream.issuer,
    clientId: upstream.clientId,
    clientSecret: upstream.clientSecret,
    redirectUri: `${context.publicUrl}${UPSTREAM_CALLBACK_PATH}`,
  });
  const requestKey = deriveUpstreamRequestKey(settings.keySecret);
  const deps: UpstreamDeps = { context, options, requestKey, party, name: escapeHtml(upstream.name) };

  const handlers: Record<(typeof UPSTREAM_ROUTES)[number][0], Route['handler']> = {
    '/login/upstream': (req, res) => start(deps, req, res),
    [UPSTREAM_CALLBACK_PATH]: (req, res) => callback(deps, req, res),
    '/account/upstream/link': (req, res) => linkForm(deps, req, res),
    '/account/upstream/unlink': (req, res) => unlinkForm(deps, req, res),
  };
  return {
    routes: UPSTREAM_ROUTES.map(([path, method]): Route => ({ path, methods: [method], handler: handlers[path] })),
    signInEntry: () => signInLink(upstream.name),
    factorsPageSection: () => signInLink(upstream.name),
    accountSection: (signedIn, req) => accountSection(deps, req, signedIn.userId),
    accountDone: ACCOUNT_DONE,
  };
}
