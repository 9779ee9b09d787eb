import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { FormError, readFields, refuse as refuseWith, sendJson, wantsJson } from '@latchkey/http';
import { findActiveUserIdByEmail } from '../oidc/account.js';
import type { SignInLimits } from '../rate-limit/index.js';
import { FORM_BODY_BYTES, type LoginContext } from '../web/context.js';
import type { FactorWeb, FactorWebDeps } from '../web/factor-module.js';
import { escapeHtml, page } from '../web/html.js';
import { isSameOrigin } from '../web/same-origin.js';
import { FACTORS_PAGE } from '../web/sign-in-flow.js';
import { subjectKey, type ClientCertificateUsers } from './certificate-subjects.js';

/** The attributes of a peer certificate's subject as node reports them (repeated types as arrays). */
function subjectPairs(certificate: PeerCertificate): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [type, value] of Object.entries((certificate.subject ?? {}) as unknown as Record<string, string | string[]>)) {
    for (const item of Array.isArray(value) ? value : [value]) if (typeof item === 'string') pairs.push([type, item]);
  }
  return pairs;
}

interface ClientCertificateSignInOptions {
  limits: SignInLimits;
  /** undefined: no client-certificate listener is configured (the route does not exist) */
  users: ClientCertificateUsers | undefined;
}

/** The methods `/login/x509` answers. */
const METHODS = ['GET', 'HEAD', 'POST'] as const;

const UNTRUSTED = 'A client certificate from a trusted authority is required.';
const UNMAPPED = 'This client certificate does not belong to an active account.';

type Refuse = (req: IncomingMessage, res: ServerResponse, status: number, message: string, headers?: Record<string, string>) => void;

/** What `/login/x509`'s handlers share: the login context, the options, and the refusal pointing back to PUBLIC_URL. */
interface ClientCertificateDeps extends ClientCertificateSignInOptions {
  context: LoginContext;
  refuse: Refuse;
}

const onTlsListener = (req: IncomingMessage) => 'encrypted' in req.socket && (req.socket as TLSSocket).encrypted === true;

/**
 * Forms come from PUBLIC_URL's pages or from this listener's own page (`https://` + the Host the browser
 * addressed: a browser never sends another site's Host with its Origin). Anything else is cross-site.
 */
function sameOrigin(req: IncomingMessage, publicOrigin: string): boolean {
  if (isSameOrigin(req, publicOrigin)) return true;
  const host = req.headers.host;
  return (
    typeof host === 'string' &&
    /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host) &&
    isSameOrigin(req, `https://${host.toLowerCase()}`)
  );
}

/** The form's fields; a bodiless POST (curl --cert ... -X POST) has none. Undefined once refused. */
async function fieldsOf(refuse: Refuse, req: IncomingMessage, res: ServerResponse): Promise<Record<string, string> | undefined> {
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
    return await readFields(req, res, FORM_BODY_BYTES);
  } catch (error) {
    if (error instanceof FormError) return void refuse(req, res, error.status, error.message);
    throw error;
  }
}

/** The account the presented certificate maps to: by fingerprint first (one certificate), then by subject. */
function emailOf(users: ClientCertificateUsers | undefined, certificate: PeerCertificate): string | undefined {
  if (!users) return undefined;
  const fingerprint =
    typeof certificate.fingerprint256 === 'string' ? users.byFingerprint.get(certificate.fingerprint256.toUpperCase()) : undefined;
  if (fingerprint) return fingerprint;
  const pairs = subjectPairs(certificate);
  return pairs.length > 0 ? users.bySubject.get(subjectKey(pairs)) : undefined;
}

function signInPage(context: LoginContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  return context.sendSignInPage(
    req,
    res,
    200,
    page(
      'Sign in with a client certificate',
      `<p>Your browser presents the certificate it holds for this site; the account it belongs to is signed in.</p>
<form method="post" action="/login/x509">
<button type="submit">Sign in with a client certificate</button>
</form>
<p><a href="${escapeHtml(context.publicUrl)}/login">Other ways to sign in</a></p>`,
    ),
    // The sign-in continues at PUBLIC_URL: the form's first redirect goes there.
    [context.origin],
  );
}

async function signIn({ context, limits, users, refuse }: ClientCertificateDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { dbOf, flow, log, gate, publicUrl } = context;
  if (!sameOrigin(req, context.origin)) return refuse(req, res, 403, 'Cross-site requests are refused.');
  const fields = await fieldsOf(refuse, req, res);
  if (!fields) return;
  const attempt = await gate.attempt(req, res, limits, (status, message, headers) => refuse(req, res, status, message, headers));
  if (!attempt) return;
  const socket = req.socket as TLSSocket;
  const certificate = socket.getPeerCertificate();
  const presented = certificate !== null && typeof certificate === 'object' && Object.keys(certificate).length > 0;
  let userId: string | null = null;
  let refusal = UNTRUSTED;
  if (presented && socket.authorized) {
    refusal = UNMAPPED;
    const email = emailOf(users, certificate);
    userId = email ? await findActiveUserIdByEmail(dbOf(req), email) : null;
  }
  if (!userId) {
    log.info(
      {
        ip: attempt.ip,
        presented,
        authorized: socket.authorized,
        reason: presented ? (socket.authorizationError?.toString() ?? 'unmapped') : 'none',
      },
      'client certificate refused',
    );
    await attempt.failed();
    return refuse(req, res, 401, refusal);
  }
  await attempt.succeeded();
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
async function route(deps: ClientCertificateDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { users, refuse } = deps;
  if (!users || !onTlsListener(req)) {
    const message = users
      ? 'Sign-in with a client certificate is only available on the TLS listener.'
      : 'Client certificates are not configured on this server.';
    return refuse(req, res, 404, message);
  }
  if (req.method === 'GET' || req.method === 'HEAD') return signInPage(deps.context, req, res);
  if (req.method !== 'POST') return refuse(req, res, 405, 'Method Not Allowed', { allow: METHODS.join(', ') });
  return signIn(deps, req, res);
}

/**
 * Sign-in with an X.509 client certificate (factor X509, amr `hwk`): `/login/x509` on the TLS listener, which
 * asks every client for a certificate and lets the TLS handshake succeed without one, so that refusals are clear
 * answers here rather than aborted connections. A certificate counts when it chains to TLS_CLIENT_CA_FILE and
 * X509_USERS_FILE maps it to an active account. Refusals count against the source like wrong one-time tokens.
 */
export function createClientCertificateWeb({ context, limits, settings }: FactorWebDeps): FactorWeb {
  const users = settings.clientCertificates;
  const { publicUrl } = context;
  /** A refusal on this listener's page: the message and a way back to PUBLIC_URL's sign-in. */
  const refusalPage = (message: string) =>
    page(
      'Sign in',
      `<p class="error" role="alert">${escapeHtml(message)}</p><p><a href="${escapeHtml(publicUrl)}/login">Start again</a></p>`,
    );
  const refuse: Refuse = (req, res, status, message, headers) => refuseWith(req, res, status, message, refusalPage, headers);
  const deps: ClientCertificateDeps = { context, limits, users, refuse };

  // Its own method check: a 404 (not here) comes first, and its 405 is a page for a browser.
  // Not offered on the pages of PUBLIC_URL: a client certificate is asked for by the TLS listener's own page.
  return { routes: [{ path: '/login/x509', methods: 'any', handler: (req, res) => route(deps, req, res) }] };
}
