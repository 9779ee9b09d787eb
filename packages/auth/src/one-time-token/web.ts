import type { IncomingMessage, ServerResponse } from 'node:http';
import { addUserIfAbsent, type Database } from '@latchkey/db';
import { refuse as refuseWith, seeOther, sendJson, type TooMany } from '@latchkey/http';
import type { DeliveryHandler } from '../delivery/index.js';
import { findActiveUserIdByEmail } from '../oidc/account.js';
import {
  consumeOneTimeToken,
  consumeOneTimeTokenInBrowser,
  consumeShortCode,
  generateOneTimeTokenWithCode,
  isShortCodeShaped,
  normalizeUsername,
  ONE_TIME_TOKEN_ERRORS,
  revokeShortCodes,
  type GenerateRequest,
} from './index.js';
import type { SignInLimits } from '../rate-limit/index.js';
import type { LoginContext } from '../web/context.js';
import type { FactorWeb, FactorWebDeps, PagePart } from '../web/factor-module.js';
import { sameOriginForm } from '../web/form.js';
import { escapeHtml, page } from '../web/html.js';
import { bindBrowser, codeBindingOf } from './code-binding.js';

interface OneTimeTokenRoutesOptions {
  delivery: DeliveryHandler;
  /** rate limits and lockout of generation and consumption (spec One-time token login 4) */
  limits: SignInLimits;
  /**
   * The customizable generate-request step (spec One-time token login 5): sees the request and may change
   * the time-to-live. @default keeps the 5-minute default
   */
  onGenerateRequest?: (request: GenerateRequest, req: IncomingMessage) => GenerateRequest;
  /** unknown addresses that ask for a link get an account (e-mail unverified). @default false */
  selfSignup?: boolean;
  /**
   * A link signs in only the browser that asked for it (BIND_LINKS_TO_BROWSER, OWASP ASVS 6.6.2); opened elsewhere it
   * signs nothing in and stays unused, and the page says to type the message's code in the browser that asked.
   * @default false
   */
  bindLinksToBrowser?: boolean;
}

const USERNAME = /^[^\s@]{1,64}@[^\s@]{1,190}$/;

/** A bound link opened in another browser (BIND_LINKS_TO_BROWSER): nothing was used up. */
const LINK_IN_ANOTHER_BROWSER =
  'This link works only in the browser where the sign-in was asked for, and it was not used. Type the 6-digit code from the message in that browser instead (or open the link there).';

const GENERATED = 'If the address belongs to an account, a sign-in link and code are on their way. Either works once, for 5 minutes.';

function sentJson(req: IncomingMessage): boolean {
  return (req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json');
}

/** A refusal on the sign-in pages: the message and a way to start again. */
const refusalPage = (message: string) =>
  page('Sign in', `<p class="error" role="alert">${escapeHtml(message)}</p><p><a href="/login">Start again</a></p>`);
const refuse = (req: IncomingMessage, res: ServerResponse, status: number, message: string, headers?: Record<string, string>) =>
  refuseWith(req, res, status, message, refusalPage, headers);

/** What the one-time token routes share: the login context and their options. */
interface OneTimeTokenDeps {
  context: LoginContext;
  options: OneTimeTokenRoutesOptions;
}

/** Self sign-up: the account exists from now on, its e-mail unverified; a suspended one stays suspended. */
async function signUp(db: Database, email: string): Promise<string | null> {
  await addUserIfAbsent(db, email);
  return findActiveUserIdByEmail(db, email);
}

/**
 * Delivery happens after the answer is sent, so neither timing nor outcome can tell accounts apart. The token
 * also gets a short code, bound to the browser that asked (`binding`); both travel in the message only.
 */
function deliverLater(
  { context: { publicUrl, dbOf, log }, options }: OneTimeTokenDeps,
  req: IncomingMessage,
  res: ServerResponse,
  username: string,
  binding: string,
): void {
  const { delivery } = options;
  setImmediate(() => {
    void (async () => {
      // The request's own view of the database: the look-ups and the new token share its one deadline.
      const db = dbOf(req);
      let userId = await findActiveUserIdByEmail(db, username);
      // Unknown addresses never get an account implicitly, unless self sign-up is switched on.
      if (!userId && options.selfSignup) userId = await signUp(db, username);
      if (!userId) return;
      const request = options.onGenerateRequest ? options.onGenerateRequest({ username }, req) : { username };
      const { token, code, expiresAt } = await generateOneTimeTokenWithCode(db, request, binding);
      const magicLink = `${publicUrl}/login/ott?token=${encodeURIComponent(token)}`;
      await delivery.deliver({ to: username, token, code, magicLink, expiresAt }, { request: req, response: res });
    })().catch((error: unknown) => log.error({ err: error, handler: delivery.name }, 'one-time token delivery failed'));
  });
}

/** A same-origin form's fields, or undefined once the refusal (403, 4xx) has been sent. */
const formOf = ({ context }: OneTimeTokenDeps, req: IncomingMessage, res: ServerResponse) =>
  sameOriginForm(req, res, context.origin, refuse);
/** 429 with Retry-After, the same for every account (the counters know nothing about accounts). */
const tooManyFor =
  (req: IncomingMessage, res: ServerResponse): TooMany =>
  (status, message, headers) =>
    refuse(req, res, status, message, headers);

/** POST /ott/generate: a link and a code for an address, on their way whoever it belongs to. */
async function generate(deps: OneTimeTokenDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { secure, gate, audit } = deps.context;
  const fields = await formOf(deps, req, res);
  if (!fields) return;
  const username = normalizeUsername(fields['username'] ?? '');
  if (!USERNAME.test(username)) return refuse(req, res, 400, 'username must be an e-mail address.');
  if (!(await gate.admit(res, deps.options.limits.generate(gate.clientAddress(req), username), tooManyFor(req, res)))) return;
  // Who asked is not looked up here: the answer and its timing are the same for every address.
  audit.record({ type: 'sign_in.started', details: { method: 'OTT' }, request: req });
  deliverLater(deps, req, res, username, bindBrowser(req, res, secure));
  if (sentJson(req)) return sendJson(res, 202, { status: 'accepted', message: GENERATED });
  seeOther(res, '/login/ott?sent=1');
}

/**
 * The "check your messages" page: one field for what the message holds, the 6-digit code (typed in the browser
 * that asked for it) or the link's token (the browser fills it from the link). The server never echoes the
 * token, or anything else from the query string.
 */
function tokenPage({ context, options }: OneTimeTokenDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', context.publicUrl);
  const notice = url.searchParams.has('sent') ? `<p role="status">${escapeHtml(GENERATED)}</p>` : '';
  const body = `${notice}
<form method="post" action="/login/ott">
<label for="token">The 6-digit code from the message (or the token of its link)</label>
<input id="token" name="token" autocomplete="one-time-code" autocapitalize="off" spellcheck="false" required>
<button type="submit">Sign in</button>
</form>
<p>${
    options.bindLinksToBrowser
      ? 'The code and the link work only in this browser, the one that asked for them.'
      : 'A code works only in this browser, the one that asked for it; the link in the message works in any browser.'
  }</p>`;
  // Take the token from the link into the form, then drop it from the address bar and history.
  const script = `(function(){var p=new URLSearchParams(location.search),t=p.get('token');if(t){document.getElementById('token').value=t;history.replaceState(null,'',location.pathname);}})();`;
  return context.sendSignInPage(req, res, 200, page('Sign in with your code', body, script));
}

/**
 * POST /login/ott: a token (from the link), or a username and short code typed in the browser the code is bound
 * to. Both count alike against the source: wrong ones slow it down, then stop it; a stopped browser's
 * outstanding codes die (their links live on), so guessing cannot outlast the lockout.
 */
async function consume(deps: OneTimeTokenDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { dbOf, flow, log, gate } = deps.context;
  const { options } = deps;
  const db = dbOf(req);
  const fields = await formOf(deps, req, res);
  if (!fields) return;
  let token = (fields['token'] ?? '').trim();
  let code = fields['code']?.trim();
  let username: string | undefined;
  if (code !== undefined && token) return refuse(req, res, 400, 'Send either a token or a code, not both.');
  if (code === undefined && !token) return refuse(req, res, 400, 'token or code is required.');
  if (code !== undefined) {
    if (!isShortCodeShaped(code)) return refuse(req, res, 400, 'code must be 6 digits.');
    username = normalizeUsername(fields['username'] ?? '');
    if (!USERNAME.test(username)) return refuse(req, res, 400, 'username must be an e-mail address.');
  } else if (isShortCodeShaped(token)) {
    // The page's one field: six digits are the message's code (a link's token is 43 characters, never digits
    // alone), looked up among this browser's codes only.
    code = token;
    token = '';
  }
  const binding = codeBindingOf(req);
  // Without this browser's binding no code is looked up, so nothing was compared: an error, not a wrong try.
  if (code !== undefined && !binding) {
    return refuse(req, res, 400, 'A code works only in the browser that asked for it. Open the link in the message instead.');
  }
  const attempt = await gate.attempt(req, res, options.limits, async (status, message, headers) => {
    if (binding) await revokeShortCodes(db, binding).catch((error: unknown) => log.error({ err: error }, 'revoking short codes failed'));
    refuse(req, res, status, message, headers);
  });
  if (!attempt) return;
  let consumed: Awaited<ReturnType<typeof consumeOneTimeToken>>;
  if (code !== undefined) consumed = await consumeShortCode(db, { username, code, binding: binding! });
  else if (!options.bindLinksToBrowser) consumed = await consumeOneTimeToken(db, token);
  else {
    const inBrowser = await consumeOneTimeTokenInBrowser(db, token, binding);
    // A live link in the wrong browser is not a guess: nothing is counted against the source, nothing used up.
    if (inBrowser === 'another-browser') return refuse(req, res, 403, LINK_IN_ANOTHER_BROWSER);
    consumed = inBrowser;
  }
  const userId = consumed ? await findActiveUserIdByEmail(db, consumed.username) : null;
  // Wrong tokens and codes slow down, then stop, the source that sends them; the account itself is never locked.
  if (!consumed || !userId) {
    await attempt.failed();
    return refuse(req, res, 401, ONE_TIME_TOKEN_ERRORS.INVALID);
  }
  await attempt.succeeded();
  seeOther(res, await flow.proveFactor(req, res, userId, 'OTT'));
}

/** The sign-in page's form: e-mail me a link (and code) for this address. */
const byEmailForm = (hint: string): PagePart => ({
  html: `<form id="by-email" method="post" action="/ott/generate">
<label for="username">E-mail address</label>
<input id="username" name="username" type="email" autocomplete="username webauthn" required value="${escapeHtml(hint)}">
<button type="submit">E-mail me a sign-in link</button>
</form>`,
  // The "check your e-mail" page offers the typed code for this address (kept in this tab only).
  script: `document.getElementById('by-email').addEventListener('submit', () => {
  try { sessionStorage.setItem('latchkey:username', document.getElementById('username').value); } catch {}
});
`,
});

/** On the factors page: a new link for the address signing in, when it has one. */
const newLinkSection = (email: string | undefined): PagePart | undefined =>
  email === undefined
    ? undefined
    : {
        html: `<form method="post" action="/ott/generate">
<input type="hidden" name="username" value="${escapeHtml(email)}">
<button type="submit">E-mail me a sign-in link</button>
</form>`,
      };

/**
 * One-time tokens (spec One-time token login; amr `otp`): POST /ott/generate and GET and POST /login/ott,
 * reachable without authentication (state-changing ones check Origin, Cross-site rules); the sign-in page's
 * e-mail form, and a new link on the factors page.
 */
export function createOneTimeTokenWeb({ context, settings, limits }: FactorWebDeps): FactorWeb {
  const options: OneTimeTokenRoutesOptions = {
    delivery: settings.delivery,
    limits,
    selfSignup: settings.selfSignup,
    bindLinksToBrowser: settings.bindLinksToBrowser,
  };
  const deps: OneTimeTokenDeps = { context, options };
  return {
    routes: [
      { path: '/ott/generate', methods: ['POST'], handler: (req, res) => generate(deps, req, res) },
      {
        path: '/login/ott',
        methods: ['GET', 'HEAD', 'POST'],
        handler: (req, res) => (req.method === 'POST' ? consume(deps, req, res) : tokenPage(deps, req, res)),
      },
    ],
    signInEntry: byEmailForm,
    factorsPageSection: (step) => newLinkSection(step.email),
  };
}
