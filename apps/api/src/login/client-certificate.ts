import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { findUserIdByEmail, type LoginLimits, type RateLimitDecision } from '@latchkey/auth';
import type { Database } from '@latchkey/db';
import type { Logger } from 'pino';
import { sendJson, sendServiceUnavailable } from '../http/respond.js';
import { escapeHtml, page, sendHtml } from './html.js';
import { FormError, readFields } from './request-body.js';
import { subjectKey, type ClientCertificateUsers } from './certificate-subjects.js';
import { isSameOrigin } from './same-origin.js';
import { FACTORS_PAGE, type SignInFlow } from './sign-in-flow.js';

/** The attributes of a peer certificate's subject as node reports them (repeated types as arrays). */
function subjectPairs(certificate: PeerCertificate): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [type, value] of Object.entries((certificate.subject ?? {}) as unknown as Record<string, string | string[]>)) {
    for (const item of Array.isArray(value) ? value : [value]) if (typeof item === 'string') pairs.push([type, item]);
  }
  return pairs;
}

export interface ClientCertificateSignInOptions {
  publicUrl: string;
  db: Database;
  flow: SignInFlow;
  limits: LoginLimits;
  logger: Logger;
  /** undefined: no client-certificate listener is configured (the route does not exist) */
  users: ClientCertificateUsers | undefined;
  /** @default 4096 */
  maxBodyBytes?: number;
  /** the client's address (TRUST_PROXY decides whose forwarded headers count): rate limits and security logs */
  clientAddress: (req: IncomingMessage) => string;
}

const UNTRUSTED = 'A client certificate from a trusted authority is required.';
const UNMAPPED = 'This client certificate does not belong to an active account.';

/**
 * Sign-in with an X.509 client certificate (factor X509, amr `hwk`): `/login/x509` on the TLS listener, which
 * asks every client for a certificate and lets the TLS handshake succeed without one, so that refusals are clear
 * answers here rather than aborted connections. A certificate counts when it chains to TLS_CLIENT_CA_FILE and
 * X509_USERS_FILE maps it to an active account. Refusals count against the source like wrong one-time tokens.
 */
export function createClientCertificateSignIn(options: ClientCertificateSignInOptions) {
  const { db, flow, limits, logger, users } = options;
  const publicUrl = options.publicUrl.replace(/\/+$/, '');
  const publicOrigin = new URL(publicUrl).origin;
  const maxBodyBytes = options.maxBodyBytes ?? 4096;
  const clientIp = options.clientAddress;
  const wantsJson = (req: IncomingMessage) =>
    (req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json') || !(req.headers.accept ?? '').includes('text/html');
  const onTlsListener = (req: IncomingMessage) => 'encrypted' in req.socket && (req.socket as TLSSocket).encrypted === true;

  function refuse(req: IncomingMessage, res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
    if (wantsJson(req)) return sendJson(res, status, { statusCode: status, message, error: STATUS_CODES[status] ?? 'Error' }, headers);
    sendHtml(
      res,
      status,
      page(
        'Sign in',
        `<p class="error" role="alert">${escapeHtml(message)}</p><p><a href="${escapeHtml(publicUrl)}/login">Start again</a></p>`,
      ),
      headers,
    );
  }

  /**
   * Forms come from PUBLIC_URL's pages or from this listener's own page (`https://` + the Host the browser
   * addressed: a browser never sends another site's Host with its Origin). Anything else is cross-site.
   */
  function sameOrigin(req: IncomingMessage): boolean {
    if (isSameOrigin(req, publicOrigin)) return true;
    const host = req.headers.host;
    return (
      typeof host === 'string' &&
      /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host) &&
      isSameOrigin(req, `https://${host.toLowerCase()}`)
    );
  }

  /** The form's fields; a bodiless POST (curl --cert ... -X POST) has none. Undefined once refused. */
  async function fieldsOf(req: IncomingMessage, res: ServerResponse): Promise<Record<string, string> | undefined> {
    const length = req.headers['content-length'];
    if (
      req.headers['content-type'] === undefined &&
      req.headers['transfer-encoding'] === undefined &&
      (length === undefined || length === '0')
    ) {
      req.resume();
      return {};
    }
    try {
      return await readFields(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof FormError) return void refuse(req, res, error.status, error.message);
      throw error;
    }
  }

  /** A counter store that cannot answer is not a reason to let everything through: 503. */
  async function decide(check: Promise<RateLimitDecision>): Promise<RateLimitDecision | 'unavailable'> {
    try {
      return await check;
    } catch (error) {
      logger.error({ err: error }, 'rate-limit store unavailable');
      return 'unavailable';
    }
  }

  /** The account the presented certificate maps to: by fingerprint first (one certificate), then by subject. */
  function emailOf(certificate: PeerCertificate): string | undefined {
    if (!users) return undefined;
    const fingerprint =
      typeof certificate.fingerprint256 === 'string' ? users.byFingerprint.get(certificate.fingerprint256.toUpperCase()) : undefined;
    if (fingerprint) return fingerprint;
    const pairs = subjectPairs(certificate);
    return pairs.length > 0 ? users.bySubject.get(subjectKey(pairs)) : undefined;
  }

  function signInPage(res: ServerResponse): void {
    sendHtml(
      res,
      200,
      page(
        'Sign in with a client certificate',
        `<p>Your browser presents the certificate it holds for this site; the account it belongs to is signed in.</p>
<form method="post" action="/login/x509">
<button type="submit">Sign in with a client certificate</button>
</form>
<p><a href="${escapeHtml(publicUrl)}/login">Other ways to sign in</a></p>`,
      ),
      // The sign-in continues at PUBLIC_URL: the form's redirect goes there.
      {
        'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${publicOrigin}; frame-ancestors 'none'; base-uri 'none'`,
      },
    );
  }

  async function signIn(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!sameOrigin(req)) return refuse(req, res, 403, 'Cross-site requests are refused.');
    const fields = await fieldsOf(req, res);
    if (!fields) return;
    const ip = clientIp(req);
    const decision = await decide(limits.consumeAttempt(ip));
    if (decision === 'unavailable') return sendServiceUnavailable(res, 'Sign-in is unavailable. Try again shortly.');
    if (!decision.allowed) {
      return refuse(req, res, 429, `Too many attempts. Try again in ${decision.retryAfterSeconds} seconds.`, {
        'retry-after': String(decision.retryAfterSeconds),
      });
    }
    const socket = req.socket as TLSSocket;
    const certificate = socket.getPeerCertificate();
    const presented = certificate !== null && typeof certificate === 'object' && Object.keys(certificate).length > 0;
    let userId: string | null = null;
    let refusal = UNTRUSTED;
    if (presented && socket.authorized) {
      refusal = UNMAPPED;
      const email = emailOf(certificate);
      userId = email ? await findUserIdByEmail(db, email) : null;
    }
    if (!userId) {
      logger.info(
        {
          ip,
          presented,
          authorized: socket.authorized,
          reason: presented ? (socket.authorizationError?.toString() ?? 'unmapped') : 'none',
        },
        'client certificate refused',
      );
      await limits.consumeFailed(ip).catch((error: unknown) => logger.error({ err: error }, 'rate-limit store unavailable'));
      return refuse(req, res, 401, refusal);
    }
    await limits.consumeSucceeded(ip).catch((error: unknown) => logger.error({ err: error }, 'rate-limit store unavailable'));
    // The sign-in goes on at PUBLIC_URL (factor page, the application's request, or the account page).
    const next = `${publicUrl}${await flow.proveFactor(req, res, userId, 'X509', { remember: fields['remember'] === '1' })}`;
    if (wantsJson(req))
      return sendJson(res, 200, { status: next.endsWith(FACTORS_PAGE) ? 'more-factors-needed' : 'signed-in', continue: next });
    res.writeHead(303, { location: next, 'cache-control': 'no-store', 'content-length': 0 });
    res.end();
  }

  /**
   * `/login/x509`: GET shows the sign-in button, POST signs in. Only on the TLS listener with client
   * certificates configured; elsewhere the route does not exist (404).
   */
  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!users || !onTlsListener(req)) {
      const message = users
        ? 'Sign-in with a client certificate is only available on the TLS listener.'
        : 'Client certificates are not configured on this server.';
      return refuse(req, res, 404, message);
    }
    if (req.method === 'GET' || req.method === 'HEAD') return signInPage(res);
    if (req.method !== 'POST') return refuse(req, res, 405, 'Method Not Allowed', { allow: 'GET, HEAD, POST' });
    return signIn(req, res);
  }

  return { route };
}
