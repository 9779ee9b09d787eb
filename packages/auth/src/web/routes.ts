import type { IncomingMessage } from 'node:http';
import { type DatabaseHandle, RETRY_AFTER_SECONDS } from '@latchkey/db';
import { createLimitGate, pagePolicy, sendHtml, type Route } from '@latchkey/http';
import { parseCookie } from 'cookie';
import type { AuditTrail } from '../audit/index.js';
import type { Factor } from '../factors/index.js';
import type { SessionStandingQuery } from '../oidc/login-policy.js';
import type { SignInLimits } from '../rate-limit/index.js';
import type { EndSessions, RevokeApp } from '../sessions/index.js';
import type { SignInPolicy } from '../sign-in/index.js';
import { createAccountRoutes } from './account.js';
import { createAuditedGate } from './audited-gate.js';
import type { LoginContext, LoginLog } from './context.js';
import type { FactorWebSettings, SignInFactor } from './factor-module.js';
import { createFactorsPage, type RegisteredWeb } from './factor-pages.js';
import { createInteractionRoutes } from './interaction.js';
import { createLoginScopes, type LoginDatabase } from './request-scope.js';
import { createSignInFlow, DEVICE_COOKIE } from './sign-in-flow.js';
import { signInPage } from './sign-in-page.js';

export interface LoginRoutesOptions extends FactorWebSettings {
  /** PUBLIC_URL, without a trailing slash */
  publicUrl: string;
  /**
   * The database: each login request sees its own view (`until`, one deadline from `deadlineFromNow`); `db` is
   * what the provider's own question about a session (`sessionNeedsLogin`) reads, under the provider's deadline.
   */
  database: LoginDatabase & Pick<DatabaseHandle, 'db'>;
  /** the sign-in factors this server knows (the factor registry, as configured), in the order the pages list them */
  factors: readonly SignInFactor[];
  /** the multi-factor rules and acr levels (AUTH_POLICY_FILE) */
  policy: SignInPolicy;
  /** the login limits of each sign-in method (one budget; the caller may count them by method) */
  limits: (method: Factor) => SignInLimits;
  log: LoginLog;
  /** the client's address (TRUST_PROXY decides whose forwarded headers count): rate limits and security logs */
  clientAddress: (req: IncomingMessage) => string;
  /** ends sessions: the account page lists this account's sessions and ends others; undefined: no such section */
  endSessions?: EndSessions;
  /** revokes a third-party app: the account page lists this account's connected apps; undefined: no such section */
  revokeApp?: RevokeApp;
  /** the security events of sign-in (started, succeeded, failed, lockout, step-up, factors added and removed) */
  audit: AuditTrail;
}

/**
 * What every module of the pages shares (the sign-in flow, the audited limits, how sign-in pages are sent), and
 * the audited limits of each sign-in method.
 */
function createLoginContext(options: LoginRoutesOptions): { context: LoginContext; limits: (method: Factor) => SignInLimits } {
  const { publicUrl, provider, log, audit } = options;
  const secure = publicUrl.startsWith('https:');
  const scopes = createLoginScopes(options.database);
  const flow = createSignInFlow({ ...scopes, provider, policy: options.policy, secure, audit, clientAddress: options.clientAddress });
  const { gate, limitsOf: limits } = createAuditedGate(
    createLimitGate({
      clientAddress: options.clientAddress,
      log,
      retryAfterSeconds: RETRY_AFTER_SECONDS,
      unavailableMessage: 'Sign-in is unavailable. Try again shortly.',
    }),
    audit,
    options.limits,
  );
  const context: LoginContext = {
    publicUrl,
    origin: new URL(publicUrl).origin,
    secure,
    ...scopes,
    factors: options.factors,
    flow,
    log,
    gate,
    audit,
    async sendSignInPage(req, res, status, body, alsoTo = []) {
      const policy = pagePolicy([...alsoTo, ...(await flow.returnTargets(req))]);
      sendHtml(res, status, body, { 'content-security-policy': policy });
    },
    async sendInteractionPage(req, res, interaction, body) {
      sendHtml(res, 200, body, { 'content-security-policy': pagePolicy(await flow.returnTargetsOf(req, interaction)) });
    },
  };
  return { context, limits };
}

/**
 * The authorization server's HTTP surface, as routes for the application to mount: the provider's sign-in and
 * interaction pages, the factors page, the account page, and each factor's own routes (its pages loaded here).
 * `sessionNeedsLogin` is the provider's question about an existing session.
 */
export async function createLoginRoutes(options: LoginRoutesOptions) {
  const { provider } = options;
  const { context, limits } = createLoginContext(options);
  const { flow } = context;
  // The pages list every factor's parts; the account page lends its helpers to the factors' account forms.
  const webs: RegisteredWeb[] = [];
  const account = createAccountRoutes(context, { provider, endSessions: options.endSessions, revokeApp: options.revokeApp, webs });
  const drawSignInPage = (hint: string) => signInPage(webs, hint);
  for (const factor of options.factors) {
    const createWeb = await factor.web();
    const web = createWeb({
      context,
      settings: options,
      limits: limits(factor.authority),
      signInPage: drawSignInPage,
      account: account.helpers,
    });
    webs.push({ authority: factor.authority, web });
  }
  const routes: Route[] = [
    ...createInteractionRoutes({ context, provider, firstParty: new Set(options.firstPartyClientIds), signInPage: drawSignInPage }),
    createFactorsPage(context, webs),
    ...webs.flatMap(({ web }) => web.routes),
    ...account.routes,
  ];

  /**
   * Whether a provider session no longer meets the account's rules or the request's `acr_values`. The provider
   * asks this while it serves one of its own endpoints: the database as it sees it (its request's deadline).
   */
  const sessionNeedsLogin = async (query: SessionStandingQuery): Promise<boolean> =>
    !(await flow.sessionMeets(
      options.database.db,
      query.sessionUid,
      query.accountId,
      query.acrValues,
      query.cookieHeader ? parseCookie(query.cookieHeader)[DEVICE_COOKIE] : undefined,
    ));

  return { routes, sessionNeedsLogin };
}
