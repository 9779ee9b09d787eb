import { decodeJwt } from 'jose';
import { BrowserSession } from './browser-session.js';
import { demoAuthorization } from './oidc.js';
import { outboxOf, tokenOf } from './outbox.js';
/**
 * Signs `email` in as a person does through the demo application (code + PKCE, the e-mailed link on the
 * provider's page), in a browser of its own, against `base` (`dataDir` holds the outbox).
 */
export async function signInThroughDemo(base, dataDir, email, identity = {}) {
    const browser = new BrowserSession(base);
    const headers = { 'user-agent': identity.userAgent ?? 'TestBrowser/1.0' };
    if (identity.forwardedFor)
        headers['x-forwarded-for'] = identity.forwardedFor;
    const application = demoAuthorization(base);
    const start = await browser.request(application.path, { headers });
    await browser.request(start.location, { headers });
    const outbox = outboxOf(dataDir);
    const before = outbox.count();
    await browser.request('/ott/generate', { form: { username: email }, headers });
    const consumed = await browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, email)) }, headers });
    let location = consumed.location;
    for (let hop = 0; hop < 5 && !location.startsWith(`${base}/callback`); hop++)
        location = (await browser.request(location, { headers })).location;
    const tokens = await application.redeem(location);
    if (tokens.status !== 200)
        throw new Error(`the token request answered ${tokens.status}`);
    const sid = decodeJwt(tokens.json.access_token)['sid'];
    if (typeof sid !== 'string')
        throw new Error('the access token carries no sid');
    return { browser, accessToken: tokens.json.access_token, refreshToken: tokens.json.refresh_token, sessionId: sid };
}
/** Trades a refresh token for new tokens at the demo client's token endpoint. */
export async function refreshDemoTokens(base, refreshToken) {
    const response = await fetch(`${base}/oidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'latchkey-demo' }),
    });
    return { status: response.status, json: (await response.json()) };
}
export const SESSIONS_QUERY = '{ mySessions { id current client userAgent address amr createdAt lastUsedAt } }';
//# sourceMappingURL=sessions.js.map