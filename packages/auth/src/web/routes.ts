import type { IncomingMessage } from 'node:http';
import { RETRY_AFTER_SECONDS, type Database } from '@latchkey/db';
import { createLimitGate, pagePolicy, sendHtml, type Route } from '@latchkey/http';
import { parseCookie } from 'cookie';
import type Provider from 'oidc-provider';
import type { DeliveryHandler } from '../delivery/index.js';
import type { Factor } from '../factors/index.js';
import type { SessionStandingQuery } from '../oidc/provider.js';
import type { PasskeyRelyingParty } from '../passkeys/index.js';
import type { AccessTokenVerifier } from '../principal/access-token-verifier.js';
import type { SignInLimits } from '../rate-limit/index.js';
import type { SignInPolicy } from '../sign-in/index.js';
import type { EndSessions } from '../sessions/index.js';
import { deriveTotpKey } from '../totp/index.js';
import type { ClientCertificateUsers } from '../x509/certificate-subjects.js';
import type { AuditTrail } from '../audit/index.js';
import { createAccountRoutes } from './account.js';
import { createAuditedGate } from './audited-gate.js';
import { createClientCertificateSignIn } from './client-certificate.js';
import type { LoginContext, LoginLog } from './context.js';
import { createFactorPages } from './factor-pages.js';
import { createOneTimeTokenRoutes } from './one-time-token.js';
import { createPasskeyRoutes } from './passkeys.js';
import { createSecondFactors } from './second-factors.js';
import { createSignInFlow, DEVICE_COOKIE } from './sign-in-flow.js';
import { createUpstreamRoutes, type UpstreamConfig, upstreamRoutesOff } from './upstream.js';

export interface LoginRoutesOptions {
  /** PUBLIC_URL, without a trailing slash */
  publicUrl: string;
  db: Database;
  /** the OpenID provider whose sessions and interactions the pages complete */
  provider: Provider;
  /** clients whose consent is implicit (first-party): a consent prompt (`prompt=consent`) is granted at once */
  firstPartyClientIds: readonly string[];
  /** the multi-factor rules and acr levels (AUTH_POLICY_FILE) */
  policy: SignInPolicy;
  /** where one-time tokens are delivered */
  delivery: DeliveryHandler;
  /** the login limits of each sign-in method (one budget; the caller may count them by method) */
  limits: (method: Factor) => SignInLimits;
  log: LoginLog;
  /** the client's address (TRUST_PROXY decides whose forwarded headers count): rate limits and security logs */
  clientAddress: (req: IncomingMessage) => string;
  /** ends sessions: the account page lists this account's sessions and ends others; undefined: no such section */
  endSessions?: EndSessions;
  /** verifies access tokens: an API client may add a passkey with one */
  verifier: AccessTokenVerifier;
  /** the server secret that sealing keys are derived from (TOTP secrets, pending upstream requests): every instance sharing it agrees */
  keySecret: string;
  /** unknown addresses that ask for a link get an account (SELF_SIGNUP) */
  selfSignup: boolean;
  /** a sign-in link signs in only the browser that asked for it (BIND_LINKS_TO_BROWSER). @default false */
  bindLinksToBrowser?: boolean;
  /** passkeys (RP_ID); undefined: switched off */
  relyingParty: PasskeyRelyingParty | undefined;
  /** whether accounts may have a password (PASSWORDS) */
  passwords: boolean;
  /** the upstream OpenID provider (UPSTREAM_ISSUER); undefined: none */
  upstream: UpstreamConfig | undefined;
  /** who a client certificate signs in (X509_USERS_FILE); undefined: `/login/x509` does not exist */
  clientCertificates: ClientCertificateUsers | undefined;
  /** the security events of sign-in (started, succeeded, failed, lockout, step-up, factors added and removed) */
  audit: AuditTrail;
}

/**
 * What every module of the pages shares (the sign-in flow, the audited limits, how sign-in pages are sent), and
 * the audited limits of each sign-in method.
 */
function createLoginContext(options: LoginRoutesOptions): { context: LoginContext; limits: (method: Factor) => SignInLimits } {
  const { publicUrl, db, provider, log, audit } = options;
  const secure = publicUrl.startsWith('https:');
  const flow = createSignInFlow({ db, provider, policy: options.policy, secure, audit, clientAddress: options.clientAddress });
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
    db,
    flow,
    log,
    gate,
    audit,
    async sendSignInPage(req, res, status, body, alsoTo = []) {
      const policy = pagePolicy([...alsoTo, ...(await flow.returnTargets(req))]);
      sendHtml(res, status, body, { 'content-security-policy': policy });
    },
    async sendInteractionPage(res, interaction, body) {
      sendHtml(res, 200, body, { 'content-security-policy': pagePolicy(await flow.returnTargetsOf(interaction)) });
    },
  };
  return { context, limits };
}

/**
 * The authorization server's HTTP surface, as routes for the application to mount: the sign-in page, one-time
 * tokens, passkeys, the factor pages, X.509 client certificates, the upstream provider, the account page and
 * the provider's interaction page. `sessionNeedsLogin` is the provider's question about an existing session.
 */
export function createLoginRoutes(options: LoginRoutesOptions) {
  const { db, provider } = options;
  const { context, limits } = createLoginContext(options);
  const { flow } = context;
  // TOTP secrets are sealed with a key derived from the server secret: every instance that shares it agrees.
  const totpKey = deriveTotpKey(options.keySecret);
  const issuer = options.relyingParty?.name;
  const upstreamName = options.upstream?.name;

  const account = createAccountRoutes(context, {
    provider,
    totpKey,
    issuer,
    passkeysEnabled: options.relyingParty !== undefined,
    passwords: options.passwords,
    upstreamSection: options.upstream ? (userId) => upstream!.accountSection(userId) : undefined,
    endSessions: options.endSessions,
  });
  // Sign-in through an upstream OpenID provider; its identities are linked on the account page.
  const upstream = options.upstream
    ? createUpstreamRoutes(context, {
        limits: limits('AUTHORIZATION_CODE'),
        upstream: options.upstream,
        keySecret: options.keySecret,
        account,
      })
    : undefined;
  const routes: Route[] = [
    ...createOneTimeTokenRoutes(context, {
      provider,
      delivery: options.delivery,
      limits: limits('OTT'),
      selfSignup: options.selfSignup,
      upstreamName,
      bindLinksToBrowser: options.bindLinksToBrowser,
      firstPartyClientIds: options.firstPartyClientIds,
    }),
    ...createPasskeyRoutes(context, {
      relyingParty: options.relyingParty,
      limits: limits('WEBAUTHN'),
      verifier: options.verifier,
      provider,
    }),
    ...createFactorPages(context, {
      secondFactors: createSecondFactors(db, totpKey, issuer ?? 'Latchkey', options.passwords),
      limits,
      passkeys: options.relyingParty !== undefined,
      upstreamName,
    }),
    // `/login/x509`: answered on the TLS listener (TLS_PORT with client certificates) only.
    createClientCertificateSignIn(context, { limits: limits('X509'), users: options.clientCertificates }),
    ...(upstream?.routes ?? upstreamRoutesOff()),
    ...account.routes,
  ];

  /** Whether a provider session no longer meets the account's rules or the request's `acr_values`. */
  const sessionNeedsLogin = async (query: SessionStandingQuery): Promise<boolean> =>
    !(await flow.sessionMeets(
      query.sessionUid,
      query.accountId,
      query.acrValues,
      query.cookieHeader ? parseCookie(query.cookieHeader)[DEVICE_COOKIE] : undefined,
    ));

  return { routes, sessionNeedsLogin };
}
