import type { IncomingMessage, ServerResponse } from 'node:http';
import { formTargetOf } from '@latchkey/http';
import type { AuditTrail } from '../audit/index.js';
import type { Factor, FactorGrant } from '../factors/index.js';
import { readProviderSession, signInProviderSession } from '../oidc/provider-session.js';
import { isRememberedDevice, rememberDevice } from '../remembered-devices/index.js';
import { recordSignInStep } from '../sessions/index.js';
import {
  accountFactsOf,
  judgeSignIn,
  PROGRESS_TTL_SECONDS,
  readSessionFactors,
  readSignInProgress,
  recordFactor,
  saveSessionFactors,
  saveSignInProgress,
  takeSignInProgress,
  type SignInPolicy,
  type SignInStanding,
} from '../sign-in/index.js';
import type Provider from 'oidc-provider';
import type { Database } from '@latchkey/db';
import { PENDING_COOKIE, clearCookie, readCookie, setCookie } from './cookies.js';
import type { LoginScopes } from './request-scope.js';

/** This browser's sign-in in progress (HttpOnly): the factors proven so far, stored server-side. */
export const PROGRESS_COOKIE = 'lk_signin';

/** A remembered browser (spec Multi-factor rules 5): a bearer token, HttpOnly, SameSite=Lax, Secure on https. */
export const DEVICE_COOKIE = 'lk_device';

/** The `acr_values` of the authorization request pending in this browser, for the pages (not secret). */
const ACR_COOKIE = 'lk_acr';

/** Where the factor pages live: what is still needed, and the forms for it. */
export const FACTORS_PAGE = '/login/factors';

const UID = /^[A-Za-z0-9_-]{10,64}$/;

/** The flow's settings; each request's database is its scope's (`dbOf`), its provider calls `inProvider`. */
export interface SignInFlowOptions extends LoginScopes {
  provider: Provider;
  policy: SignInPolicy;
  /** cookies are Secure when PUBLIC_URL is https */
  secure: boolean;
  /** the client's address (TRUST_PROXY decides whose forwarded headers count): shown in the session list */
  clientAddress: (req: IncomingMessage) => string;
  /** a completed sign-in is `sign_in.succeeded`, one that built on the browser's session `step_up.succeeded` */
  audit: AuditTrail;
}

/** A sign-in that is not complete yet: whose, what it holds, and what it still needs. */
export interface PendingSignIn {
  userId: string;
  factors: FactorGrant[];
  standing: SignInStanding & { complete: false };
}

/** The interaction of the authorization request pending in this browser, when there is one. */
const pendingInteraction = (req: IncomingMessage) => {
  const uid = readCookie(req, PENDING_COOKIE);
  return uid && UID.test(uid) ? uid : undefined;
};

/**
 * Where the authorization request pending in this browser returns once its sign-in completes: the origin (or a
 * native app's scheme) of its `redirect_uri`, as the provider validated it against the client's registration
 * when it began the interaction; none without a pending request. A page whose form may complete the request names
 * it in its `form-action` (only this one request's, never every client's, never one read from the request).
 */
async function returnTargets({ provider, inProvider }: SignInFlowOptions, req: IncomingMessage): Promise<string[]> {
  const uid = pendingInteraction(req);
  if (!uid) return [];
  const interaction = await inProvider(req, () => provider.Interaction.find(uid));
  return returnTargetsOf({ provider, inProvider }, req, interaction);
}

/** Where an interaction returns (its client's validated `redirect_uri`), as a `form-action` source. */
async function returnTargetsOf(
  { provider, inProvider }: Pick<SignInFlowOptions, 'provider' | 'inProvider'>,
  req: IncomingMessage,
  interaction: { params: Record<string, unknown> } | undefined,
): Promise<string[]> {
  const clientId = interaction?.params['client_id'];
  const redirectUri = interaction?.params['redirect_uri'];
  if (typeof clientId !== 'string' || typeof redirectUri !== 'string') return [];
  const client = await inProvider(req, () => provider.Client.find(clientId));
  const target = client?.redirectUriAllowed(redirectUri) ? formTargetOf(redirectUri) : undefined;
  return target ? [target] : [];
}

/**
 * The `acr_values` of the authorization request pending in this browser, as its login page noted them (the
 * provider's own interaction cookie is scoped to that page). Only what the pages show depends on this note:
 * the login page itself judges the sign-in against the request's real `acr_values` before finishing it.
 */
function requestedAcr(req: IncomingMessage): string[] {
  if (!pendingInteraction(req)) return [];
  return (readCookie(req, ACR_COOKIE) ?? '').split(' ').filter(Boolean);
}

/** Notes (or forgets) the `acr_values` of the authorization request pending in this browser. */
function noteRequestedAcr(secure: boolean, res: ServerResponse, acrValues: readonly string[]): void {
  if (acrValues.length === 0) clearCookie(res, ACR_COOKIE, { path: '/', secure });
  else setCookie(res, ACR_COOKIE, acrValues.join(' '), { path: '/', maxAgeSeconds: 3600, secure });
}

async function judge(
  { dbOf, policy }: SignInFlowOptions,
  req: IncomingMessage,
  userId: string,
  factors: readonly FactorGrant[],
  acrValues = requestedAcr(req),
): Promise<SignInStanding | null> {
  const db = dbOf(req);
  const account = await accountFactsOf(db, userId);
  if (!account) return null;
  const rememberedDevice = await isRememberedDevice(db, userId, readCookie(req, DEVICE_COOKIE));
  return judgeSignIn(policy, account, factors, { acrValues, rememberedDevice });
}

/** Remembers this browser for the account (opt-in, after a sign-in that needed more than one factor). */
async function rememberThisBrowser(
  { dbOf, secure }: SignInFlowOptions,
  req: IncomingMessage,
  res: ServerResponse,
  userId: string,
): Promise<void> {
  const { token, expiresAt } = await rememberDevice(dbOf(req), { userId, label: String(req.headers['user-agent'] ?? 'A browser') });
  setCookie(res, DEVICE_COOKIE, token, { path: '/', maxAgeSeconds: Math.floor((expiresAt.getTime() - Date.now()) / 1000), secure });
}

/** The factors of this browser's provider session, when it belongs to `userId` (a step-up builds on them). */
async function sessionFactorsFor(
  { dbOf, provider, inProvider }: SignInFlowOptions,
  req: IncomingMessage,
  res: ServerResponse,
  userId: string,
): Promise<FactorGrant[]> {
  const session = await inProvider(req, () => readProviderSession(provider, req, res));
  if (!session || session.accountId !== userId) return [];
  return (await readSessionFactors(dbOf(req), session.sessionUid, userId)) ?? [];
}

/** Signs the browser in to the provider with these factors and remembers them beside the session. */
async function establishSession(
  deps: SignInFlowOptions,
  req: IncomingMessage,
  res: ServerResponse,
  userId: string,
  factors: readonly FactorGrant[],
  standing: SignInStanding & { complete: true },
  stepUp: boolean,
): Promise<void> {
  const { audit } = deps;
  const db = deps.dbOf(req);
  const signIn = { accountId: userId, amr: standing.amr, acr: standing.acr ?? '' };
  const session = await deps.inProvider(req, () => signInProviderSession(deps.provider, req, res, signIn));
  await saveSessionFactors(db, { sessionUid: session.sessionUid, userId, factors, expiresAt: session.expiresAt });
  await recordSignInStep(db, req, { sessionUid: session.sessionUid, userId, address: deps.clientAddress(req) || null });
  // The factor proven last is the one that completed it.
  const last = factors.reduce((latest, grant) => (grant.issuedAt >= latest.issuedAt ? grant : latest), factors[0]!);
  const details = { method: last.factor, amr: standing.amr, acr: standing.acr ?? '' };
  audit.record({ type: stepUp ? 'step_up.succeeded' : 'sign_in.succeeded', details, actor: userId, subject: userId, request: req });
}

/**
 * `userId` has just proven `factor` in this browser. Returns where the browser goes next: the factor page
 * while something is still needed, the pending authorization request once the sign-in is complete, or the
 * account page when no application is waiting.
 */
async function proveFactor(
  deps: SignInFlowOptions,
  req: IncomingMessage,
  res: ServerResponse,
  userId: string,
  factor: Factor,
  options: { remember?: boolean } = {},
): Promise<string> {
  const { secure } = deps;
  const db = deps.dbOf(req);
  const seed = await sessionFactorsFor(deps, req, res, userId);
  const progress = await recordFactor(db, { progressId: readCookie(req, PROGRESS_COOKIE), userId, factor, seed });
  const standing = await judge(deps, req, userId, progress.factors);
  // Opt-in, and only where it can spare something: a sign-in that took more than one factor.
  if (options.remember && standing?.complete && progress.factors.length > 1) await rememberThisBrowser(deps, req, res, userId);
  if (!standing) {
    await takeSignInProgress(db, progress.progressId);
    clearCookie(res, PROGRESS_COOKIE, { path: '/', secure });
    return '/login';
  }
  if (!standing.complete) {
    setCookie(res, PROGRESS_COOKIE, progress.progressId, { path: '/', maxAgeSeconds: PROGRESS_TTL_SECONDS, secure });
    return FACTORS_PAGE;
  }
  const pending = pendingInteraction(req);
  if (pending) {
    // The interaction page finishes the application's request with this complete sign-in.
    setCookie(res, PROGRESS_COOKIE, progress.progressId, { path: '/', maxAgeSeconds: PROGRESS_TTL_SECONDS, secure });
    return `/interaction/${pending}`;
  }
  await takeSignInProgress(db, progress.progressId);
  clearCookie(res, PROGRESS_COOKIE, { path: '/', secure });
  await establishSession(deps, req, res, userId, progress.factors, standing, seed.length > 0);
  return '/account';
}

/**
 * At the login prompt of an authorization request: when this browser's sign-in in progress is complete (for
 * this request's `acr_values` too), sign in with it. Returns the login result, or null to show the sign-in.
 */
async function completeForInteraction(
  deps: SignInFlowOptions,
  req: IncomingMessage,
  res: ServerResponse,
  request: { acrValues: string[] },
  beforeSession: (accountId: string) => Promise<void>,
): Promise<{ accountId: string; amr: string[]; acr: string } | null> {
  const { provider, secure } = deps;
  const db = deps.dbOf(req);
  noteRequestedAcr(secure, res, request.acrValues);
  const progressId = readCookie(req, PROGRESS_COOKIE);
  const progress = await readSignInProgress(db, progressId);
  if (!progress) return null;
  const standing = await judge(deps, req, progress.userId, progress.factors, request.acrValues);
  if (!standing?.complete) return null;
  if (!(await takeSignInProgress(db, progressId))) return null; // another request used it first
  clearCookie(res, PROGRESS_COOKIE, { path: '/', secure });
  // A step-up completes the session this browser already has for the account.
  const stepUp = (await deps.inProvider(req, () => readProviderSession(provider, req, res)))?.accountId === progress.userId;
  await beforeSession(progress.userId);
  await establishSession(deps, req, res, progress.userId, progress.factors, standing, stepUp);
  return { accountId: progress.userId, amr: standing.amr, acr: standing.acr ?? '' };
}

/**
 * A provider session that no longer meets the rules (a factor past its validity) or an application's
 * `acr_values` (step-up): continue it as a sign-in in progress seeded with the session's factors, so only
 * what is missing is asked for. Returns false when there is no session to build on.
 */
async function continueFromSession(
  { dbOf, provider, inProvider, secure }: SignInFlowOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const session = await inProvider(req, () => readProviderSession(provider, req, res));
  if (!session) return false;
  const db = dbOf(req);
  const factors = (await readSessionFactors(db, session.sessionUid, session.accountId)) ?? [];
  const progressId = await saveSignInProgress(db, { userId: session.accountId, factors });
  setCookie(res, PROGRESS_COOKIE, progressId, { path: '/', maxAgeSeconds: PROGRESS_TTL_SECONDS, secure });
  return true;
}

/** This browser's sign-in that still needs something, for the factor page; null when there is none. */
async function pendingSignIn(deps: SignInFlowOptions, req: IncomingMessage): Promise<PendingSignIn | null> {
  const progress = await readSignInProgress(deps.dbOf(req), readCookie(req, PROGRESS_COOKIE));
  if (!progress) return null;
  const standing = await judge(deps, req, progress.userId, progress.factors);
  if (!standing || standing.complete) return null;
  return { userId: progress.userId, factors: progress.factors, standing };
}

/**
 * Whether a provider session still meets the account's rules (validity durations) and `acrValues`, on a
 * browser that may be remembered (`deviceToken`), read through `db` (a login request's view, or the provider's
 * database when the provider itself asks).
 */
async function sessionMeets(
  policy: SignInPolicy,
  db: Database,
  sessionUid: string,
  userId: string,
  acrValues: string[],
  deviceToken: string | undefined,
): Promise<boolean> {
  const factors = await readSessionFactors(db, sessionUid, userId);
  const account = await accountFactsOf(db, userId);
  if (!factors || !account) return false;
  const rememberedDevice = await isRememberedDevice(db, userId, deviceToken);
  return judgeSignIn(policy, account, factors, { acrValues, rememberedDevice }).complete;
}

/**
 * The sign-in flow across factors (spec Multi-factor rules 1-3): every proven factor is recorded in this
 * browser's sign-in in progress; the flow moves the user to the factor pages until the account's rules (and an
 * application's `acr_values`) are met, then signs the browser in to the provider with the factors' `amr`/`acr`,
 * either finishing the application's pending authorization request or, without one, on its own.
 */
export function createSignInFlow(options: SignInFlowOptions) {
  return {
    proveFactor: (req: IncomingMessage, res: ServerResponse, userId: string, factor: Factor, choices?: { remember?: boolean }) =>
      proveFactor(options, req, res, userId, factor, choices),
    completeForInteraction: (
      req: IncomingMessage,
      res: ServerResponse,
      request: { acrValues: string[] },
      beforeSession: (accountId: string) => Promise<void>,
    ) => completeForInteraction(options, req, res, request, beforeSession),
    continueFromSession: (req: IncomingMessage, res: ServerResponse) => continueFromSession(options, req, res),
    pendingSignIn: (req: IncomingMessage, _res: ServerResponse) => pendingSignIn(options, req),
    sessionMeets: (db: Database, sessionUid: string, userId: string, acrValues: string[], deviceToken: string | undefined) =>
      sessionMeets(options.policy, db, sessionUid, userId, acrValues, deviceToken),
    pendingInteraction,
    returnTargets: (req: IncomingMessage) => returnTargets(options, req),
    returnTargetsOf: (req: IncomingMessage, interaction: { params: Record<string, unknown> } | undefined) =>
      returnTargetsOf(options, req, interaction),
  };
}

export type SignInFlow = ReturnType<typeof createSignInFlow>;
