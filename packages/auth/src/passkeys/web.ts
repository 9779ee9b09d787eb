import type { IncomingMessage, ServerResponse } from 'node:http';
import { findUserById } from '@latchkey/db';
import { discardBody, httpErrorBody, readJsonObject, FormError, sendHttpError, sendJson, type Route } from '@latchkey/http';
import { readProviderSession } from '../oidc/provider-session.js';
import type Provider from 'oidc-provider';
import {
  finishPasskeyAuthentication,
  finishPasskeyRegistration,
  PasskeyError,
  startPasskeyAuthentication,
  startPasskeyRegistration,
  type PasskeyRelyingParty,
} from './index.js';
import { callerFrom, type AccessTokenVerifier } from '../principal/access-token-verifier.js';
import type { SignedInCaller } from '../principal/access-token-verifier.js';
import { proofOfRequest } from '../principal/dpop-proof.js';
import { CREDENTIAL_CHANGE_STEP_UP, meetsStepUp, stepUpChallengeHeader, stepUpParameters } from '../principal/step-up.js';
import type { SignInLimits } from '../rate-limit/index.js';
import { isRandomTokenShaped, randomToken } from '../secrets/random-token.js';
import type { LoginContext } from '../web/context.js';
import { readCookie, setCookie } from '../web/cookies.js';
import type { FactorWeb, FactorWebDeps, PagePart } from '../web/factor-module.js';
import { isSameOrigin } from '../web/same-origin.js';
import { DEVICE_COOKIE, FACTORS_PAGE } from '../web/sign-in-flow.js';
import { ACCOUNT_DONE, passkeyAccountForms, passkeyAccountSection } from './account-page.js';

/** The browser the ceremony runs in: a random id in an HttpOnly cookie; challenges are bound to it. */
const WEBAUTHN_COOKIE = 'lk_webauthn';

/** The passkey endpoints' paths. */
const PASSKEY_PATHS = ['/webauthn/register/options', '/webauthn/register', '/webauthn/authenticate/options', '/login/webauthn'] as const;

/** WebAuthn payloads are nested JSON, larger than a form. */
const PASSKEY_BODY_BYTES = 16_384;

interface PasskeyRoutesOptions {
  /** undefined: passkeys are not configured (no usable RP ID), and their paths answer 404 saying so */
  relyingParty: PasskeyRelyingParty | undefined;
  limits: SignInLimits;
  /** access tokens (API clients, the demo client) name the caller of a registration */
  verifier: AccessTokenVerifier;
  /** without an access token, the provider session (the account page) does */
  provider: Provider;
}

const fail = (
  res: ServerResponse,
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) => sendJson(res, status, httpErrorBody(status, message, extra), headers);

/** What the passkey endpoints share: the login context, their options, and the configured relying party. */
interface PasskeyDeps {
  context: LoginContext;
  options: PasskeyRoutesOptions;
  rp: PasskeyRelyingParty;
}

type PasskeyHandler = (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => Promise<void>;

/** The browser binding, created on first use (SameSite=Strict: never sent by another site's requests). */
function bindingOf({ context }: PasskeyDeps, req: IncomingMessage, res: ServerResponse): string {
  const existing = readCookie(req, WEBAUTHN_COOKIE);
  if (isRandomTokenShaped(existing)) return existing;
  const created = randomToken();
  setCookie(res, WEBAUTHN_COOKIE, created, { path: '/', maxAgeSeconds: 3600, secure: context.secure });
  return created;
}

/** Runs a handler with the shared refusals: cross-site 403, bad bodies 4xx, refused passkeys 400. */
function endpoint(origin: string, handle: PasskeyHandler) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!isSameOrigin(req, origin)) {
      discardBody(req, res);
      return fail(res, 403, 'Cross-site requests are refused.');
    }
    let body: Record<string, unknown>;
    try {
      body = await readJsonObject(req, res, PASSKEY_BODY_BYTES);
    } catch (error) {
      if (error instanceof FormError) return fail(res, error.status, error.message);
      throw error;
    }
    try {
      await handle(req, res, body);
    } catch (error) {
      if (error instanceof PasskeyError) return fail(res, 400, error.message, { code: error.code });
      throw error;
    }
  };
}

/**
 * The signed-in caller of a registration: an access token's (API clients, the demo client) or, without one, the
 * provider session's (the account page). Null for none, 'rejected' for a bad token.
 */
async function callerOf(
  { context, options }: PasskeyDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<Pick<SignedInCaller, 'subject' | 'acr' | 'authTime'> | null | 'rejected'> {
  const result = await callerFrom(options.verifier, { authorization: req.headers.authorization, dpop: () => proofOfRequest(req) });
  if (result !== undefined) return result.ok ? result.caller : 'rejected';
  const session = await context.inProvider(req, () => readProviderSession(options.provider, req, res));
  // A session past a factor's validity (spec Multi-factor rules 2) is no caller until it is renewed.
  if (
    !session ||
    !(await context.flow.sessionMeets(context.dbOf(req), session.sessionUid, session.accountId, [], readCookie(req, DEVICE_COOKIE)))
  )
    return null;
  return { subject: session.accountId, acr: session.acr || null, authTime: session.authTime };
}

async function signedInUser(
  deps: PasskeyDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<{ id: string; email: string; displayName: string | null } | null> {
  const caller = await callerOf(deps, req, res);
  if (caller === null || caller === 'rejected') {
    fail(
      res,
      401,
      caller === null ? 'Sign in to add a passkey.' : 'The access token is invalid or expired.',
      {},
      { 'www-authenticate': caller === null ? 'Bearer' : 'Bearer error="invalid_token"' },
    );
    return null;
  }
  // Adding a passkey is a credential change: it needs a recent sign-in (RFC 9470 challenge otherwise).
  if (!meetsStepUp(caller, CREDENTIAL_CHANGE_STEP_UP)) {
    fail(
      res,
      401,
      'Adding a passkey needs a recent sign-in.',
      { code: 'INSUFFICIENT_USER_AUTHENTICATION', ...stepUpParameters(CREDENTIAL_CHANGE_STEP_UP) },
      { 'www-authenticate': stepUpChallengeHeader(CREDENTIAL_CHANGE_STEP_UP) },
    );
    return null;
  }
  const user = await findUserById(deps.context.dbOf(req), caller.subject);
  if (!user || user.suspended) {
    fail(res, 403, 'This account cannot add passkeys.');
    return null;
  }
  return { id: user.id, email: user.email, displayName: user.displayName };
}

/** POST /webauthn/register/options: the creation options for the signed-in caller's new passkey. */
async function registerOptions(deps: PasskeyDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const user = await signedInUser(deps, req, res);
  if (!user) return;
  const creation = await startPasskeyRegistration(deps.context.dbOf(req), deps.rp, {
    userId: user.id,
    userName: user.email,
    displayName: user.displayName ?? user.email,
    binding: bindingOf(deps, req, res),
  });
  sendJson(res, 200, creation);
}

/** POST /webauthn/register: the credential the browser created, stored for the signed-in caller. */
async function register(deps: PasskeyDeps, req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): Promise<void> {
  const user = await signedInUser(deps, req, res);
  if (!user) return;
  if (typeof body['response'] !== 'object' || body['response'] === null)
    return fail(res, 400, 'response must be the credential the browser created.');
  const label = body['label'];
  if (label !== undefined && typeof label !== 'string') return fail(res, 400, 'label must be a string.');
  const passkey = await finishPasskeyRegistration(deps.context.dbOf(req), deps.rp, {
    userId: user.id,
    binding: bindingOf(deps, req, res),
    response: body['response'] as never,
    label,
  });
  deps.context.audit.record({ type: 'factor.added', details: { factor: 'WEBAUTHN' }, actor: user.id, subject: user.id, request: req });
  sendJson(res, 201, passkey);
}

/** POST /webauthn/authenticate/options: a sign-in challenge, bound to this browser. */
async function authenticateOptions(
  deps: PasskeyDeps,
  req: IncomingMessage,
  res: ServerResponse,
  body: Record<string, unknown>,
): Promise<void> {
  const username = typeof body['username'] === 'string' ? body['username'] : undefined;
  const request = await startPasskeyAuthentication(deps.context.dbOf(req), deps.rp, { binding: bindingOf(deps, req, res), username });
  deps.context.audit.record({ type: 'sign_in.started', details: { method: 'WEBAUTHN' }, request: req });
  sendJson(res, 200, request);
}

/** POST /login/webauthn: the assertion proves the passkey factor; the sign-in continues in this browser. */
async function signIn(deps: PasskeyDeps, req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): Promise<void> {
  const { dbOf, flow, gate } = deps.context;
  const db = dbOf(req);
  const attempt = await gate.attempt(req, res, deps.options.limits, (status, message, headers) => fail(res, status, message, {}, headers));
  if (!attempt) return;
  if (typeof body['response'] !== 'object' || body['response'] === null)
    return fail(res, 400, 'response must be the assertion the browser produced.');
  let result: Awaited<ReturnType<typeof finishPasskeyAuthentication>>;
  try {
    result = await finishPasskeyAuthentication(db, deps.rp, { binding: bindingOf(deps, req, res), response: body['response'] as never });
  } catch (error) {
    if (error instanceof PasskeyError) await attempt.failed();
    throw error;
  }
  const user = await findUserById(db, result.userId);
  if (!user || user.suspended) return fail(res, 403, 'This account cannot sign in.');
  await attempt.succeeded();
  const next = await flow.proveFactor(req, res, result.userId, 'WEBAUTHN');
  sendJson(res, 200, { status: next === FACTORS_PAGE ? 'more-factors-needed' : 'signed-in', continue: next });
}

/**
 * The passkey endpoints of the spec (POST /webauthn/register/options, /webauthn/register,
 * /webauthn/authenticate/options, /login/webauthn). Registration needs a signed-in caller; sign-in continues in
 * the browser that proved the passkey, like a one-time token (amr `swk`).
 */
function createPasskeyEndpoints(context: LoginContext, options: PasskeyRoutesOptions): Route[] {
  const rp = options.relyingParty;
  if (!rp) {
    const off: Route['handler'] = (_req, res) => sendHttpError(res, 404, 'Passkeys are not configured on this server (set RP_ID).');
    return PASSKEY_PATHS.map((path) => ({ path, methods: 'any', handler: off }));
  }
  const deps: PasskeyDeps = { context, options, rp };
  const { origin } = context;
  const handlers = {
    '/webauthn/register/options': endpoint(origin, (req, res) => registerOptions(deps, req, res)),
    '/webauthn/register': endpoint(origin, (req, res, body) => register(deps, req, res, body)),
    '/webauthn/authenticate/options': endpoint(origin, (req, res, body) => authenticateOptions(deps, req, res, body)),
    '/login/webauthn': endpoint(origin, (req, res, body) => signIn(deps, req, res, body)),
  };
  return PASSKEY_PATHS.map((path) => ({ path, methods: ['POST'], handler: handlers[path] }));
}

/** "Sign in with a passkey" and where its failure is announced. */
const PASSKEY_BUTTON = `<button id="passkey" type="button">Sign in with a passkey</button>
<p id="passkey-error" class="error" role="alert"></p>`;

/**
 * "Sign in with a passkey": discoverable credentials, no username needed. Uses the browser's own JSON
 * helpers for WebAuthn options and credentials, then goes where the sign-in continues.
 */
const PASSKEY_SIGN_IN_SCRIPT = `document.getElementById('passkey').addEventListener('click', async () => {
  const error = document.getElementById('passkey-error');
  error.textContent = '';
  try {
    const post = (path, body) => fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' });
    const options = await (await post('/webauthn/authenticate/options', {})).json();
    const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) });
    const answer = await post('/login/webauthn', { response: credential.toJSON() });
    const result = await answer.json();
    if (!answer.ok) throw new Error(result.message);
    location.assign(result.continue);
  } catch (failure) {
    error.textContent = failure && failure.message ? failure.message : 'The passkey sign-in did not complete.';
  }
});`;

const SIGN_IN_BUTTON: PagePart = { html: PASSKEY_BUTTON, script: PASSKEY_SIGN_IN_SCRIPT };

/**
 * Passkeys (WebAuthn, amr `swk`): the endpoints, "Sign in with a passkey" on the sign-in page (always: the
 * browser says when it has none) and on the factors page (when RP_ID is configured), the account page's list.
 */
export function createPasskeyWeb({ context, settings, limits, account }: FactorWebDeps): FactorWeb {
  const { relyingParty, verifier, provider } = settings;
  const enabled = relyingParty !== undefined;
  return {
    routes: [...createPasskeyEndpoints(context, { relyingParty, limits, verifier, provider }), ...passkeyAccountForms(context, account)],
    signInEntry: () => SIGN_IN_BUTTON,
    factorsPageSection: () => (enabled ? SIGN_IN_BUTTON : undefined),
    accountSection: (signedIn, req) => passkeyAccountSection(context.dbOf(req), enabled, signedIn.userId),
    accountDone: ACCOUNT_DONE,
  };
}
