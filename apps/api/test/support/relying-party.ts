import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';
import { seedDemoData } from '@latchkey/db';
import { onFreePort } from './browser-session.js';
import { outboxOf } from './outbox.js';
import { startLocalhostService } from './service.js';

/**
 * A relying party's own web server, on an origin other than the provider's (`http://127.0.0.1:<port>`, the
 * provider at `http://localhost:<port>`): it receives the authorization responses a browser brings back (query or
 * `form_post`), the browser's return after sign-out, and back-channel logout tokens; it can also serve a page of
 * its own (a single-page app). Each callback is handed to the test as the `Request` openid-client reads.
 */
export interface RelyingPartyServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  /** the authorization response to the request with this `state`, once brought to `/cb` (GET, or a `form_post` POST) */
  callbackFor(state: string): Promise<Request>;
  /** the logout tokens POSTed to `/backchannel` so far */
  logoutTokens: string[];
  /** serves `html` at `path` (a single-page app's page) */
  servePage(path: string, html: string): void;
  close(): Promise<void>;
}

const SIGNED_IN_PAGE = '<!doctype html><title>Back at the app</title><h1 id="app">Back at the app</h1>';
const SIGNED_OUT_PAGE = '<!doctype html><title>Signed out of the app</title><h1 id="signed-out">Signed out of the app</h1>';

const require = createRequire(import.meta.url);
/** oauth4webapi (openid-client's own core, no dependencies), served to a single-page app's page as an ES module. */
const OAUTH4WEBAPI_MODULE = readFileSync(require.resolve('oauth4webapi'), 'utf8');

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body)).on('error', reject);
  });
}

/** Starts a relying party's server on a free port of 127.0.0.1 (the port it registers is known before the provider starts). */
export async function startRelyingParty(): Promise<RelyingPartyServer> {
  /** responses by their `state`, and who waits for which */
  const callbacks = new Map<string, Request>();
  const waiting = new Map<string, (request: Request) => void>();
  const logoutTokens: string[] = [];
  const pages = new Map<string, string>();
  const deliver = (state: string, request: Request) => {
    const waiter = waiting.get(state);
    waiting.delete(state);
    if (waiter) waiter(request);
    else callbacks.set(state, request);
  };

  async function handle(req: IncomingMessage, res: ServerResponse, origin: string): Promise<void> {
    const url = new URL(req.url ?? '/', origin);
    const html = (status: number, body: string) => res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    if (url.pathname === '/cb') {
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      const headers = { 'content-type': String(req.headers['content-type'] ?? 'application/x-www-form-urlencoded') };
      const state = (body === undefined ? url.searchParams : new URLSearchParams(body)).get('state') ?? '';
      deliver(state, new Request(url, body === undefined ? {} : { method: 'POST', body, headers }));
      return void html(200, SIGNED_IN_PAGE);
    }
    if (url.pathname === '/signed-out') return void html(200, SIGNED_OUT_PAGE);
    if (url.pathname === '/backchannel' && req.method === 'POST') {
      logoutTokens.push(new URLSearchParams(await readBody(req)).get('logout_token') ?? '');
      return void res.writeHead(200).end();
    }
    if (url.pathname === '/oauth4webapi.js') {
      return void res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(OAUTH4WEBAPI_MODULE);
    }
    const page = pages.get(url.pathname);
    if (page !== undefined) return void html(200, page);
    html(404, 'not found');
  }

  return onFreePort(async (port) => {
    const origin = `http://127.0.0.1:${port}`;
    const server: Server = createServer((req, res) => {
      handle(req, res, origin).catch((error: unknown) => res.writeHead(500).end(String(error)));
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    return {
      origin,
      port,
      callbackFor: (state) =>
        new Promise<Request>((resolve) => {
          const ready = callbacks.get(state);
          callbacks.delete(state);
          if (ready) resolve(ready);
          else waiting.set(state, resolve);
        }),
      logoutTokens,
      servePage: (path, html) => void pages.set(path, html),
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  });
}

/** openid-client's view of the provider for one registered client (plain HTTP is allowed: the tests run on loopback). */
export function discover(
  issuer: string,
  clientId: string,
  clientAuth: oidc.ClientAuth = oidc.None(),
  metadata: Partial<oidc.ClientMetadata> = {},
): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(issuer), clientId, metadata, clientAuth, { execute: [oidc.allowInsecureRequests] });
}

/** What an authorization request needs remembered until its response comes back (PKCE, state, nonce). */
export interface PendingAuthorization {
  url: URL;
  checks: { pkceCodeVerifier: string; expectedState: string; expectedNonce: string };
}

/** An authorization request as openid-client builds it: code + PKCE (S256), state and nonce. */
export async function authorizationRequest(
  config: oidc.Configuration,
  parameters: Record<string, string>,
  options: { par?: boolean; dpop?: oidc.DPoPHandle } = {},
): Promise<PendingAuthorization> {
  const pkceCodeVerifier = oidc.randomPKCECodeVerifier();
  const expectedState = oidc.randomState();
  const expectedNonce = oidc.randomNonce();
  const all = {
    scope: 'openid email profile api',
    code_challenge: await oidc.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
    state: expectedState,
    nonce: expectedNonce,
    ...parameters,
  };
  const url = options.par
    ? await oidc.buildAuthorizationUrlWithPAR(config, all, options.dpop ? { DPoP: options.dpop } : {})
    : oidc.buildAuthorizationUrl(config, all);
  return { url, checks: { pkceCodeVerifier, expectedState, expectedNonce } };
}

/**
 * The CSP violations the browser reports on `page` (a form's redirect blocked by `form-action`, say): the list, and
 * a promise that rejects with the first, to race against what the test waits for (a blocked redirect never arrives).
 */
export function cspViolations(page: Page): { list: string[]; first: Promise<never> } {
  const list: string[] = [];
  let report: (violation: string) => void = () => {};
  const first = new Promise<never>((_resolve, reject) => (report = (violation) => reject(new Error(`CSP violation: ${violation}`))));
  first.catch(() => {});
  page.on('console', (message) => {
    if (!/Content Security Policy/i.test(message.text())) return;
    list.push(message.text());
    report(message.text());
  });
  return { list, first };
}

/**
 * A seeded development service whose OIDC_CLIENTS are `clients` (the relying parties listen on loopback: the
 * provider may send them back-channel logouts there), with its outbox.
 */
export async function startProviderFor(clients: object[], env: Record<string, string> = {}) {
  const { service, base } = await startLocalhostService({
    NODE_ENV: 'development',
    OIDC_CLIENTS: JSON.stringify(clients),
    OIDC_PRIVATE_NETWORK_FETCH: 'true',
    ...env,
  });
  await seedDemoData(service.database);
  return { service, base, outbox: outboxOf(service.config.dataDir) };
}

/** A first-party client of the application at `app`: its redirect at `/cb`, its return after sign-out at `/signed-out`. */
export function registeredAt(app: RelyingPartyServer, client: Record<string, unknown>) {
  return {
    redirect_uris: [`${app.origin}/cb`],
    post_logout_redirect_uris: [`${app.origin}/signed-out`],
    first_party: true,
    ...client,
  };
}
