import { escapeHtml, page } from './html.js';

/** "Sign in with a passkey" and where its failure is announced. */
export const PASSKEY_BUTTON = `<button id="passkey" type="button">Sign in with a passkey</button>
<p id="passkey-error" class="error" role="alert"></p>`;

/**
 * "Sign in with a passkey": discoverable credentials, no username needed. Uses the browser's own JSON
 * helpers for WebAuthn options and credentials, then goes where the sign-in continues.
 */
export const PASSKEY_SIGN_IN_SCRIPT = `document.getElementById('passkey').addEventListener('click', async () => {
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

const REMEMBER_USERNAME_SCRIPT = `document.getElementById('by-email').addEventListener('submit', () => {
  // The "check your e-mail" page offers the typed code for this address (kept in this tab only).
  try { sessionStorage.setItem('latchkey:username', document.getElementById('username').value); } catch {}
});
`;

/**
 * "Sign in with <provider>": a link, not a form (the pages' CSP lets forms post to this origin only, and the
 * sign-in goes on at the upstream provider).
 */
export function upstreamSignInLink(name: string): string {
  return `<p><a id="upstream" href="/login/upstream">Sign in with ${escapeHtml(name)}</a></p>`;
}

/** The sign-in form: e-mail me a link (and code), use a passkey, or (when configured) an upstream provider. */
export function signInPage(hint: string, upstreamName?: string): string {
  return page(
    'Sign in',
    `
<form id="by-email" method="post" action="/ott/generate">
<label for="username">E-mail address</label>
<input id="username" name="username" type="email" autocomplete="username webauthn" required value="${escapeHtml(hint)}">
<button type="submit">E-mail me a sign-in link</button>
</form>
<p>or</p>
${PASSKEY_BUTTON}${upstreamName ? `\n<p>or</p>\n${upstreamSignInLink(upstreamName)}` : ''}`,
    REMEMBER_USERNAME_SCRIPT + PASSKEY_SIGN_IN_SCRIPT,
  );
}
