import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DEMO_CLIENT_SCRIPT } from './client-script.js';
import { DEMO_STYLESHEET } from './stylesheet.js';

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
  // Its own stylesheet (/demo.css), so the page's CSP allows no inline style at all.
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Latchkey demo client</title>
<link rel="stylesheet" href="/demo.css">
</head>
<body>
<header><h1>Latchkey demo client</h1><p class="muted">A public OpenID client in this page, calling the API as you.</p></header>
<main>
<p id="error" class="error" role="alert"></p>
<section id="signed-out" class="card">
<p>Sign in through the Latchkey OpenID provider (authorization code with PKCE). A sign-in link from the mail
completes the sign-in in any tab of this browser.</p>
<button id="sign-in" type="button" class="primary">Sign in</button>
</section>
<section id="signed-in" hidden>
<div class="card">
<p>Signed in as <strong id="who"></strong>. <button id="sign-out" type="button">Sign out</button></p>
</div>
<section class="card">
<h2>Your documents</h2>
<p class="muted">What you see here is what your role lets you see, decided by the same rules the API applies everywhere:
the viewers of an organization see its published documents once their embargo is over; editors and above see every
document of it. Each document says who else sees it.</p>
<p id="documents-error" class="error"></p>
<ul id="documents" class="documents"></ul>
<p id="documents-status" role="status"></p>
</section>
<section class="card">
<h2>Your access token</h2>
<p>It is bound to this browser's key (DPoP): every call this page makes carries a proof signed with a key kept in
this browser, which not even this page can read. Copied anywhere else, as <code>Authorization: Bearer ...</code>, it is
refused (<code>WWW-Authenticate: DPoP error="invalid_token"</code>):</p>
<pre id="access-token" class="token"></pre>
<h2>ID token claims</h2>
<pre id="claims"></pre>
</section>
<section class="card">
<h2>Passkeys</h2>
<ul id="passkeys" class="passkeys"></ul>
<button id="add-passkey" type="button">Add a passkey</button>
<p id="passkey-status" role="status"></p>
<p class="muted">Passkeys can also be managed on <a href="/account">your account page</a> at the provider.</p>
</section>
</section>
</main>
<script type="application/json" id="demo-config">${config}</script>
<script type="module" src="/demo.js"></script>
</body>
</html>
`;
  const csp =
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

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

  function sendStylesheet(_req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/css; charset=utf-8',
      'cache-control': 'no-cache',
      'content-length': Buffer.byteLength(DEMO_STYLESHEET),
    });
    res.end(DEMO_STYLESHEET);
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

  return { sendPage, sendScript, sendStylesheet, sendClientModule };
}
