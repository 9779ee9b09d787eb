import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { htmlPage as page } from '@latchkey/auth';
import { DEMO_CLIENT_SCRIPT } from './client-script.js';

export interface DemoClientOptions {
  publicUrl: string;
  clientId: string;
  /** how the demo's client sends operations: as the server accepts them (PERSISTED_MODE) */
  persisted: 'apq' | 'trusted' | 'off';
}

/**
 * The built ES modules of packages/client, by URL path (`/client/index.js`, ...): read once at start-up, so the
 * browser loads exactly the typed client the server was built with, and nothing else from the disk.
 */
function clientModules(): Map<string, Buffer> {
  const dist = path.dirname(createRequire(import.meta.url).resolve('@latchkey/client'));
  const modules = new Map<string, Buffer>();
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.join(dir, entry.name), `${prefix}${entry.name}/`);
      else if (entry.name.endsWith('.js')) modules.set(`/client/${prefix}${entry.name}`, readFileSync(path.join(dir, entry.name)));
    }
  };
  walk(dist, '');
  return modules;
}

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/**
 * The demo client at `/` (and its redirect URI `/callback`): a public OpenID client in the browser that signs
 * in with code + PKCE, shows the ID token's claims and the caller's documents. Public pages (no sign-in).
 */
export function createDemoClient(options: DemoClientOptions) {
  const config = JSON.stringify({
    clientId: options.clientId,
    redirectUri: `${options.publicUrl}/callback`,
    postLogoutRedirectUri: `${options.publicUrl}/`,
    persisted: options.persisted,
  }).replace(/</g, '\\u003c');
  const body = `<p id="error" class="error" role="alert"></p>
<section id="signed-out">
<p>Sign in through the Latchkey OpenID provider (authorization code with PKCE).</p>
<button id="sign-in" type="button">Sign in</button>
</section>
<section id="signed-in" hidden>
<p>Signed in as <strong id="who"></strong>.</p>
<h2>ID token claims</h2>
<pre id="claims"></pre>
<h2>Your access token</h2>
<p>It is bound to this browser's key (DPoP): every call this page makes carries a proof signed with a key kept in
this browser, which not even this page can read. Copied anywhere else, as <code>Authorization: Bearer ...</code>, it is
refused (<code>WWW-Authenticate: DPoP error="invalid_token"</code>):</p>
<pre id="access-token" style="white-space:pre-wrap;word-break:break-all"></pre>
<h2>Your documents</h2>
<p id="documents-error" class="error"></p>
<ul id="documents"></ul>
<p id="documents-status" role="status"></p>
<h2>Passkeys</h2>
<ul id="passkeys"></ul>
<button id="add-passkey" type="button">Add a passkey</button>
<p id="passkey-status" role="status"></p>
<p>Passkeys can also be managed on <a href="/account">your account page</a> at the provider.</p>
<button id="sign-out" type="button">Sign out</button>
</section>
<script type="application/json" id="demo-config">${config}</script>
<script type="module" src="/demo.js"></script>`;
  const html = page('Latchkey demo client', body);
  const csp =
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

  function sendPage(_req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': csp,
      'content-length': Buffer.byteLength(html),
    });
    res.end(html);
  }

  function sendScript(_req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'no-cache',
      'content-length': Buffer.byteLength(DEMO_CLIENT_SCRIPT),
    });
    res.end(DEMO_CLIENT_SCRIPT);
  }

  const modules = clientModules();

  /** `/client/...js`: a module of the typed client; false when there is no such module. */
  function sendClientModule(_req: IncomingMessage, res: ServerResponse, urlPath: string): boolean {
    const body = modules.get(urlPath);
    if (!body) return false;
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache', 'content-length': body.length });
    res.end(body);
    return true;
  }

  return { sendPage, sendScript, sendClientModule };
}
