import { createHash } from 'node:crypto';
import { randomToken } from '@latchkey/auth';

/**
 * The demo client's authorization request (code + PKCE, as the page at / makes it): the path to start it at,
 * and `redeem`, which trades the code of the redirect back to `/callback` for tokens, as the page does.
 */
export function demoAuthorization(base: string, extra: Record<string, string> = {}) {
  const verifier = randomToken();
  const params = new URLSearchParams({
    client_id: 'latchkey-demo',
    response_type: 'code',
    redirect_uri: `${base}/callback`,
    scope: 'openid email',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'st',
    nonce: 'n',
    ...extra,
  });
  return {
    path: `/oidc/auth?${params}`,
    verifier,
    /** The token response for the callback URL the provider redirected to (its `code`). */
    async redeem(
      callbackUrl: string,
      headers: Record<string, string> = {},
    ): Promise<{ status: number; json: { id_token: string; access_token: string; refresh_token?: string; token_type?: string } }> {
      const callback = new URL(callbackUrl);
      if (`${callback.origin}${callback.pathname}` !== `${base}/callback`)
        throw new Error(`not the demo client's callback: ${callbackUrl}`);
      const response = await fetch(`${base}/oidc/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: callback.searchParams.get('code')!,
          redirect_uri: `${base}/callback`,
          client_id: 'latchkey-demo',
          code_verifier: verifier,
        }),
      });
      return { status: response.status, json: (await response.json()) as never };
    },
  };
}
