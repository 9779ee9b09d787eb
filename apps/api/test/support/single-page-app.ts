/**
 * A single-page application (OAuth 2.0 for Browser-Based Apps): a public client whose page does everything itself
 * with oauth4webapi, served from its own origin: code + PKCE by redirect, the code exchanged and the tokens refreshed
 * with `fetch` at the provider's token endpoint (CORS), userinfo and the API called with `fetch` (CORS_ORIGINS). Its `#out`
 * reports each step as JSON, or the error that stopped it.
 */
export function singlePageApp(options: { issuer: string; clientId: string; redirectUri: string; graphql: string }): string {
  const settings = JSON.stringify(options);
  return `<!doctype html>
<html lang="en"><meta charset="utf-8"><title>Single-page app</title>
<button id="sign-in" type="button">Sign in</button>
<pre id="out"></pre>
<script type="module">
import * as oauth from '/oauth4webapi.js';
const { issuer, clientId, redirectUri, graphql } = ${settings};
const insecure = { [oauth.allowInsecureRequests]: true };
const client = { client_id: clientId };
const out = (value) => (document.getElementById('out').textContent = JSON.stringify(value));
const issuerUrl = new URL(issuer);
const as = await oauth.processDiscoveryResponse(issuerUrl, await oauth.discoveryRequest(issuerUrl, insecure));

document.getElementById('sign-in').addEventListener('click', async () => {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  sessionStorage.setItem('pending', JSON.stringify({ verifier, state }));
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email offline_access api',
    prompt: 'consent',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  location.assign(url);
});

async function me(accessToken) {
  const response = await fetch(graphql, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + accessToken },
    body: JSON.stringify({ query: '{ me { email } }' }),
  });
  return (await response.json()).data.me.email;
}

if (location.pathname === new URL(redirectUri).pathname) {
  try {
    const { verifier, state } = JSON.parse(sessionStorage.getItem('pending'));
    const params = oauth.validateAuthResponse(as, client, new URL(location.href), state);
    const exchanged = await oauth.processAuthorizationCodeResponse(
      as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, insecure),
    );
    const refreshed = await oauth.processRefreshTokenResponse(
      as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), exchanged.refresh_token, insecure),
    );
    // Userinfo from the page too (CORS for the token's client's origins), with the refreshed token.
    const userinfo = await fetch(as.userinfo_endpoint, { headers: { authorization: 'Bearer ' + refreshed.access_token } });
    out({
      scope: exchanged.scope,
      userinfo: await userinfo.json(),
      email: await me(exchanged.access_token),
      refreshedEmail: await me(refreshed.access_token),
      rotated: refreshed.refresh_token !== exchanged.refresh_token,
      idToken: exchanged.id_token,
      accessToken: refreshed.access_token,
    });
  } catch (error) {
    out({ error: String(error && error.message ? error.message : error) });
  }
}
</script>
</html>`;
}

/** A page of another origin (not registered for the client) that tries the single-page app's code exchange. */
export function foreignTokenRequestPage(tokenEndpoint: string, clientId: string): string {
  return `<!doctype html>
<html lang="en"><meta charset="utf-8"><title>Another site</title>
<pre id="out"></pre>
<script type="module">
try {
  const response = await fetch(${JSON.stringify(tokenEndpoint)}, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', redirect_uri: 'http://127.0.0.1/x', client_id: ${JSON.stringify(clientId)}, code_verifier: 'x' }),
  });
  document.getElementById('out').textContent = 'read: ' + response.status;
} catch (error) {
  document.getElementById('out').textContent = 'blocked: ' + error.name;
}
</script>
</html>`;
}
