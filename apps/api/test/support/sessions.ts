import { decodeJwt } from 'jose';
import { BrowserSession } from './browser-session.js';
import { demoAuthorization } from './oidc.js';
import { outboxOf, tokenOf } from './outbox.js';

/** A browser signed in through the demo client: its cookies, its tokens and the session id its access token names. */
export interface SignedInBrowser {
  browser: BrowserSession;
  accessToken: string;
  refreshToken: string | undefined;
  sessionId: string;
  /** `Bearer`, or `DPoP` for tokens bound to a key */
  tokenType: string | undefined;
}

/** Who the browser is: its User-Agent, and the address a trusted proxy reports for it (TRUST_PROXY=loopback). */
export interface BrowserIdentity {
  userAgent?: string;
  forwardedFor?: string;
  /** a DPoP proof for the token request (its `DPoP` header): the tokens are then bound to the proof's key */
  tokenRequestProof?: () => Promise<string>;
}

/**
 * Signs `email` in as a person does through the demo application (code + PKCE, the e-mailed link on the
 * provider's page), in a browser of its own, against `base` (`dataDir` holds the outbox).
 */
export async function signInThroughDemo(
  base: string,
  dataDir: string,
  email: string,
  identity: BrowserIdentity = {},
): Promise<SignedInBrowser> {
  const browser = new BrowserSession(base);
  const headers: Record<string, string> = { 'user-agent': identity.userAgent ?? 'TestBrowser/1.0' };
  if (identity.forwardedFor) headers['x-forwarded-for'] = identity.forwardedFor;
  const application = demoAuthorization(base);
  const start = await browser.request(application.path, { headers });
  await browser.request(start.location!, { headers });
  const outbox = outboxOf(dataDir);
  const before = outbox.count();
  await browser.request('/ott/generate', { form: { username: email }, headers });
  const consumed = await browser.request('/login/ott', { form: { token: tokenOf(await outbox.next(before, email)) }, headers });
  let location = consumed.location!;
  for (let hop = 0; hop < 5 && !location.startsWith(`${base}/callback`); hop++)
    location = (await browser.request(location, { headers })).location!;
  const tokens = await application.redeem(location, identity.tokenRequestProof ? { dpop: await identity.tokenRequestProof() } : {});
  if (tokens.status !== 200) throw new Error(`the token request answered ${tokens.status}`);
  const sid = decodeJwt(tokens.json.access_token)['sid'];
  if (typeof sid !== 'string') throw new Error('the access token carries no sid');
  return {
    browser,
    accessToken: tokens.json.access_token,
    refreshToken: tokens.json.refresh_token,
    sessionId: sid,
    tokenType: tokens.json.token_type,
  };
}

/** Trades a refresh token for new tokens at the demo client's token endpoint. */
export async function refreshDemoTokens(base: string, refreshToken: string) {
  const response = await fetch(`${base}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'latchkey-demo' }),
  });
  return { status: response.status, json: (await response.json()) as { access_token?: string; refresh_token?: string; error?: string } };
}

export const SESSIONS_QUERY = '{ mySessions { id current client userAgent address amr createdAt lastUsedAt } }';
