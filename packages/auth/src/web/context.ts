import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuditTrail } from '../audit/index.js';
import type { FactorIdentity } from '../factors/index.js';
import type { AuditedGate } from './audited-gate.js';
import type { LoginScopes } from './request-scope.js';
import type { SignInFlow } from './sign-in-flow.js';

/** Where the login routes tell what happened (pino's logger fits). */
export interface LoginLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * What every module of the authorization server's pages and routes shares. The database is the request's own
 * (`dbOf(req)`: one deadline per request); calls into oidc-provider run `inProvider(req, ...)`.
 */
export interface LoginContext extends LoginScopes {
  /** PUBLIC_URL, without a trailing slash */
  publicUrl: string;
  /** PUBLIC_URL's origin: the one a form post must come from (spec Cross-site rules) */
  origin: string;
  /** cookies are Secure when PUBLIC_URL is https */
  secure: boolean;
  /** every registered factor: how the pages name each */
  factors: readonly FactorIdentity[];
  /** the sign-in across factors: where a proven factor leads */
  flow: SignInFlow;
  log: LoginLog;
  /** the rate-limit decisions of the sign-in routes, and the client's address they count by (failures audited) */
  gate: AuditedGate;
  /** where security events are recorded (never waits, never throws) */
  audit: AuditTrail;
  /**
   * Sends a sign-in page whose form may complete this browser's pending authorization request: its CSP lets the
   * form's redirects continue to where that request returns (`alsoTo`: further origins, e.g. PUBLIC_URL's from the
   * TLS listener).
   */
  sendSignInPage(req: IncomingMessage, res: ServerResponse, status: number, body: string, alsoTo?: readonly string[]): Promise<void>;
  /** Sends the sign-in page of an authorization request's interaction (its cookie is only being set): the same policy. */
  sendInteractionPage(
    req: IncomingMessage,
    res: ServerResponse,
    interaction: { params: Record<string, unknown> },
    body: string,
  ): Promise<void>;
}

/** Bodies of the login forms. */
export const FORM_BODY_BYTES = 4096;

/** Bodies that carry passwords (up to 256 characters of any script, URL-encoded, twice for the confirmation). */
export const PASSWORD_BODY_BYTES = 16_384;
