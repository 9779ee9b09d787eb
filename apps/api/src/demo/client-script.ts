/**
 * The demo client's browser script (an ES module): authorization code + PKCE against the provider, then the API
 * through the typed client of packages/client (served at /client/), with the server's persisted-operation mode.
 * Tokens live in sessionStorage of the tab that signed in, bound by DPoP (RFC 9449) to a non-extractable key the typed
 * client keeps in IndexedDB: a stolen token is worthless without the key, and a reload keeps it. A sign-in in progress
 * (its PKCE verifier, and an operation to retry after a step-up) is kept in localStorage under its `state`, so the
 * callback completes it in whichever tab of this browser it arrives: a sign-in link opened from a mail client opens a
 * new one. Served as /demo.js (no inline script).
 * Step-up (RFC 9470): an operation the API answers with INSUFFICIENT_USER_AUTHENTICATION (the client's
 * StepUpRequiredError) starts a new authorization request with the challenge's `acr_values` / `max_age`, and is
 * retried once after the callback.
 */
export const DEMO_CLIENT_SCRIPT = String.raw`
import { createClient, createDpopSigner, DocumentsDocument, MyPasskeysDocument, RemovePasskeyDocument, RenamePasskeyDocument, SetLegalHoldDocument, StepUpRequiredError } from '/client/index.js';

{
  const config = JSON.parse(document.getElementById('demo-config').textContent);
  const dpop = await createDpopSigner({ name: config.clientId });
  const $ = (id) => document.getElementById(id);
  const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const random = (n) => b64url(crypto.getRandomValues(new Uint8Array(n)));
  const show = (id, on) => { $(id).hidden = !on; };
  const text = (id, value) => { $(id).textContent = value; };

  /** Sign-ins in progress, by state (any tab of this browser may receive the callback); abandoned ones expire. */
  const SIGN_IN = 'demo.sign-in.';
  const SIGN_IN_LIFETIME_MS = 30 * 60 * 1000;
  function forgetStaleSignIns() {
    for (const key of Object.keys(localStorage)) {
      if (!key.startsWith(SIGN_IN)) continue;
      const entry = JSON.parse(localStorage.getItem(key) || 'null');
      if (!entry || !(Date.now() - entry.at < SIGN_IN_LIFETIME_MS)) localStorage.removeItem(key);
    }
  }

  /**
   * step: the API's step-up challenge ({ acr_values, max_age }), asked of the provider as they are; pending: the
   * operation to retry once the new sign-in is done.
   */
  async function signIn(step, pending) {
    const verifier = random(32);
    const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
    const state = random(16);
    forgetStaleSignIns();
    localStorage.setItem(SIGN_IN + state, JSON.stringify({ verifier, pending: pending || null, at: Date.now() }));
    const params = new URLSearchParams({
      client_id: config.clientId, response_type: 'code', redirect_uri: config.redirectUri,
      scope: 'openid email profile api', code_challenge: challenge, code_challenge_method: 'S256', state,
    });
    if (step && step.acr_values) params.set('acr_values', step.acr_values);
    if (step && step.max_age !== undefined) params.set('max_age', String(step.max_age));
    location.assign('/oidc/auth?' + params);
  }

  /** The callback: the sign-in its state names (started in this tab or another), then the tokens. Answers its pending operation. */
  async function finishSignIn(params) {
    const key = SIGN_IN + (params.get('state') || '');
    const saved = JSON.parse(localStorage.getItem(key) || 'null');
    localStorage.removeItem(key);
    history.replaceState(null, '', '/');
    if (params.get('error')) throw new Error(params.get('error_description') || params.get('error'));
    if (!saved || !(Date.now() - saved.at < SIGN_IN_LIFETIME_MS))
      throw new Error('This sign-in was not started in this browser, or too long ago: press Sign in to start again.');
    const response = await fetch('/oidc/token', {
      method: 'POST',
      // The proof binds the tokens to this browser's key (cnf.jkt): every API call then proves it holds the key.
      headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await dpop.proof('POST', '/oidc/token') },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: params.get('code'), redirect_uri: config.redirectUri, client_id: config.clientId, code_verifier: saved.verifier }),
    });
    if (!response.ok) throw new Error('The token request failed (' + response.status + ').');
    sessionStorage.setItem('demo.tokens', JSON.stringify(await response.json()));
    return saved.pending;
  }

  const tokens = () => JSON.parse(sessionStorage.getItem('demo.tokens') || 'null');
  const client = createClient({ url: '/graphql', persisted: config.persisted, dpop, getAccessToken: () => tokens() && tokens().access_token });
  /** The operations a step-up may have to retry after the new sign-in, by name. */
  const OPERATIONS = { SetLegalHold: SetLegalHoldDocument, RenamePasskey: RenamePasskeyDocument, RemovePasskey: RemovePasskeyDocument };

  function claimsOf(jwt) {
    const part = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(decodeURIComponent(escape(atob(part))));
  }

  async function render() {
    const signedIn = tokens();
    show('signed-out', !signedIn);
    show('signed-in', !!signedIn);
    if (!signedIn) return;
    const claims = claimsOf(signedIn.id_token);
    text('who', claims.email || claims.sub);
    text('claims', JSON.stringify({ sub: claims.sub, email: claims.email, amr: claims.amr, acr: claims.acr, auth_time: claims.auth_time }, null, 2));
    text('access-token', signedIn.access_token);
    const list = $('documents');
    list.replaceChildren();
    let result;
    try {
      result = await client.request(DocumentsDocument, { first: 20 });
    } catch (error) {
      text('documents-error', 'The API answered: ' + error.message);
      return;
    }
    for (const { node } of result.documents.edges) {
      const item = document.createElement('li');
      const title = document.createElement('strong');
      title.textContent = node.title;
      const where = document.createElement('span');
      where.className = 'muted';
      where.textContent = ' in ' + node.organization.slug + ' ';
      item.append(title, where, ...badgesOf(node));
      const why = document.createElement('p');
      why.className = 'why';
      why.textContent = whoSees(node);
      item.append(why);
      // Legal hold asks for a phishing-resistant sign-in (step-up): the API says so when the token falls short.
      if (node.viewerCan.setLegalHold) {
        const hold = document.createElement('button');
        hold.type = 'button';
        hold.textContent = (node.legalHold ? 'Lift legal hold on ' : 'Put legal hold on ') + node.title;
        hold.addEventListener('click', () => {
          const done = { status: 'documents-status', message: node.legalHold ? 'Legal hold lifted.' : 'Legal hold set.' };
          api('SetLegalHold', { id: node.id, legalHold: !node.legalHold }, done)
            .then(() => { text(done.status, done.message); return render(); })
            .catch((error) => text('documents-status', error.message));
        });
        item.append(' ', hold);
      }
      list.append(item);
    }
    await renderPasskeys();
  }

  /** The document's state, embargo and legal hold, as small labels. */
  function badgesOf(node) {
    const badge = (label, kind) => {
      const span = document.createElement('span');
      span.className = 'badge ' + kind;
      span.textContent = label;
      return span;
    };
    const badges = [badge(node.status.toLowerCase(), node.status === 'PUBLISHED' ? 'ok' : 'hidden')];
    if (embargoed(node)) badges.push(badge('embargoed', 'hidden'));
    if (node.legalHold) badges.push(badge('legal hold', 'hold'));
    return badges;
  }
  const embargoed = (node) => node.embargoUntil !== null && new Date(node.embargoUntil) > new Date();

  /** Why the document is shown to whom: the rules the API applies (docs/behaviour.md), in a sentence. */
  function whoSees(node) {
    const org = node.organization.slug;
    const until = embargoed(node) ? new Date(node.embargoUntil).toISOString().slice(0, 10) : '';
    const seen = node.status !== 'PUBLISHED'
      ? 'Hidden from the viewers of ' + org + ' (' + (node.status === 'DRAFT' ? 'a draft' : 'archived') + '): editors and above see it.'
      : embargoed(node)
        ? 'Hidden from the viewers of ' + org + ' until ' + until + ' (embargo): editors and above see it now.'
        : 'Every member of ' + org + ' sees it.';
    return seen + (node.legalHold ? ' Under legal hold: nobody can delete it, not even an owner.' : '');
  }

  function signOut() {
    const signedIn = tokens();
    sessionStorage.removeItem('demo.tokens');
    const params = new URLSearchParams({ client_id: config.clientId, post_logout_redirect_uri: config.postLogoutRedirectUri });
    if (signedIn) params.set('id_token_hint', signedIn.id_token);
    location.assign('/oidc/session/end?' + params);
  }

  /**
   * One mutation by name (OPERATIONS). When the API asks for a step-up, the operation is remembered with the sign-in
   * (with the message to show once it is done) and the browser goes to sign in again; after the callback it is
   * retried once.
   */
  async function api(name, variables, done, retried) {
    try {
      return await client.request(OPERATIONS[name], variables);
    } catch (error) {
      if (!(error instanceof StepUpRequiredError) || retried) throw error;
      const step = {};
      if (error.acrValues) step.acr_values = error.acrValues;
      if (error.maxAge !== undefined) step.max_age = error.maxAge;
      await signIn(step, { name, variables, done });
      return new Promise(() => {}); // the page is leaving
    }
  }

  /** After a step-up sign-in: the remembered operation, once. */
  async function resumePending(pending) {
    if (!pending) return;
    try {
      await api(pending.name, pending.variables, pending.done, true);
      if (pending.done) text(pending.done.status, pending.done.message);
    } catch (error) {
      text(pending.done ? pending.done.status : 'error', error.message);
    }
  }

  /** The user's passkeys, each with rename and remove (GraphQL me.passkeys, renamePasskey, removePasskey). */
  async function renderPasskeys() {
    const data = await client.request(MyPasskeysDocument);
    const list = $('passkeys');
    list.replaceChildren();
    for (const passkey of data.me.passkeys || []) {
      const item = document.createElement('li');
      const name = document.createElement('input');
      name.value = passkey.label || '';
      name.setAttribute('aria-label', 'Passkey name');
      const rename = document.createElement('button');
      rename.type = 'button';
      rename.textContent = 'Rename';
      rename.addEventListener('click', () => api('RenamePasskey', { id: passkey.id, label: name.value }, { status: 'passkey-status', message: 'Passkey renamed.' })
        .then(() => { text('passkey-status', 'Passkey renamed.'); return renderPasskeys(); })
        .catch((error) => text('passkey-status', error.message)));
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.textContent = 'Remove';
      remove.addEventListener('click', () => api('RemovePasskey', { id: passkey.id }, { status: 'passkey-status', message: 'Passkey removed.' })
        .then(() => { text('passkey-status', 'Passkey removed.'); return renderPasskeys(); })
        .catch((error) => text('passkey-status', error.message)));
      item.append(name, ' ', rename, ' ', remove);
      list.append(item);
    }
  }

  /** Registers a passkey for the signed-in user (the DPoP-bound access token and a proof), with the browser's JSON helpers. */
  async function addPasskey() {
    const post = async (path, body) => fetch(path, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'content-type': 'application/json', authorization: 'DPoP ' + tokens().access_token, dpop: await dpop.proof('POST', path, tokens().access_token) },
      body: JSON.stringify(body),
    });
    const optionsResponse = await post('/webauthn/register/options', {});
    const options = await optionsResponse.json();
    if (!optionsResponse.ok) throw new Error(options.message);
    const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) });
    const saved = await post('/webauthn/register', { response: credential.toJSON(), label: 'Demo passkey' });
    const passkey = await saved.json();
    if (!saved.ok) throw new Error(passkey.message);
    text('passkey-status', 'Passkey added.');
    await renderPasskeys();
  }

  $('add-passkey').addEventListener('click', () => { addPasskey().catch((error) => text('passkey-status', error.message)); });
  $('sign-in').addEventListener('click', () => { signIn().catch((error) => text('error', error.message)); });
  $('sign-out').addEventListener('click', signOut);
  const params = new URLSearchParams(location.search);
  (params.has('code') || params.has('error') ? finishSignIn(params).then(resumePending) : Promise.resolve())
    .then(render)
    .catch((error) => { text('error', error.message); render(); });
}
`;
