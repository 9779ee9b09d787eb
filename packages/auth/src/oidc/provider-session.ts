import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';

/** The provider session's cookie options: the same as the provider's own (see createAuthorizationServer). */
export const SESSION_COOKIE_OPTIONS = { signed: true, httpOnly: true, sameSite: 'lax' } as const;

/** How long a provider session lasts (and its cookie). */
export const SESSION_TTL_SECONDS = 14 * 86_400;

/** Who is signed in to the provider in this browser, and how. */
export interface ProviderSignIn {
  accountId: string;
  amr: string[];
  acr: string;
  /** seconds since the epoch */
  authTime: number;
}

/** A provider session as read back: the sign-in, and the session's stable uid. */
export interface ProviderSessionState extends ProviderSignIn {
  sessionUid: string;
}

type SessionContext = { req: IncomingMessage; res: ServerResponse };

/**
 * The provider's session of this browser (its signed session cookie), or null when nobody is signed in.
 * Pages served beside the provider (the account page) use it instead of a second session mechanism.
 */
export async function readProviderSession(
  provider: Provider,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<ProviderSessionState | null> {
  const session = await provider.Session.get({ req, res } as SessionContext as never);
  if (!session.accountId || typeof session.loginTs !== 'number') return null;
  return {
    accountId: session.accountId,
    sessionUid: session.uid,
    amr: session.amr ?? [],
    acr: session.acr ?? '',
    authTime: session.loginTs,
  };
}

/**
 * Signs this browser in to the provider outside an authorization request (a sign-in started on the
 * provider's own pages): the session the provider itself would create at the end of a login interaction,
 * so later authorization requests from any client skip the login prompt. The session id is always new
 * (no session fixation); another account's session in this browser is ended first.
 */
export async function signInProviderSession(
  provider: Provider,
  req: IncomingMessage,
  res: ServerResponse,
  signIn: Omit<ProviderSignIn, 'authTime'>,
): Promise<{ sessionUid: string; expiresAt: Date }> {
  const ctx = provider.createContext(req, res);
  let session = await provider.Session.get(ctx as never);
  if (session.accountId && session.accountId !== signIn.accountId) {
    // Another person's session in this browser ends here, with everything it authorized.
    await session.destroy();
    session = new provider.Session();
  } else {
    session.resetIdentifier();
  }
  session.loginAccount({ accountId: signIn.accountId, amr: signIn.amr, acr: signIn.acr });
  ctx.cookies.set(provider.cookieName('session'), session.jti, { ...SESSION_COOKIE_OPTIONS, maxAge: SESSION_TTL_SECONDS * 1000 });
  await session.save(SESSION_TTL_SECONDS);
  return { sessionUid: session.uid, expiresAt: new Date(Date.now() + SESSION_TTL_SECONDS * 1000) };
}
