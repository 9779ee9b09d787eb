import { createServer, type Server } from 'node:http';
import Provider from 'oidc-provider';

/** An account at the upstream provider: its subject and the e-mail it reports. */
export interface UpstreamAccount {
  sub: string;
  email: string;
}

export interface UpstreamProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** signs `sub` in at the upstream provider in its own browser and returns the callback URL it sends back to */
  authorize(authorizationUrl: string, sub: string): Promise<string>;
  /** the user cancels at the upstream provider: returns the callback URL (with error=access_denied) */
  cancel(authorizationUrl: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Tests only: a second oidc-provider on 127.0.0.1 acting as the upstream OpenID provider, with one confidential
 * client (`redirectUri`) and the given accounts. Its development interactions are its login form (any password);
 * consent is implicit for the client.
 */
export async function startUpstreamProvider(options: { redirectUri: string; accounts: UpstreamAccount[] }): Promise<UpstreamProvider> {
  // Listening first, on a port the system picks, then naming the issuer after it: a port found free and bound later
  // may be taken in between by another process's outgoing connection.
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  const issuer = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const clientId = 'latchkey';
  const clientSecret = 'upstream-client-secret-0123456789abcdef';
  const accounts = new Map(options.accounts.map((account) => [account.sub, account]));
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    cookies: { keys: ['upstream-test-cookie-key-0123456789'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    features: { devInteractions: { enabled: true } },
    // The e-mail travels in the ID token too, so a relying party could be tempted to link by it.
    conformIdTokenClaims: false,
    ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    findAccount: (_ctx, sub) => {
      const account = accounts.get(sub);
      return account ? { accountId: sub, claims: () => ({ sub, email: account.email, email_verified: true }) } : undefined;
    },
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email');
      await grant.save();
      return grant;
    },
  });
  server.on('request', provider.callback());

  /** One browser at the upstream provider: its own cookies, every redirect followed by hand. */
  function browser() {
    const cookies = new Map<string, string>();
    return async (url: string, form?: Record<string, string>) => {
      const headers: Record<string, string> = {};
      if (cookies.size > 0) headers['cookie'] = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
      const response = await fetch(url, {
        method: form ? 'POST' : 'GET',
        headers,
        body: form ? new URLSearchParams(form).toString() : undefined,
        redirect: 'manual',
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const index = pair!.indexOf('=');
        const value = pair!.slice(index + 1).trim();
        if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) cookies.delete(pair!.slice(0, index).trim());
        else cookies.set(pair!.slice(0, index).trim(), value);
      }
      await response.text();
      return {
        status: response.status,
        location: response.headers.get('location') ? new URL(response.headers.get('location')!, url).href : undefined,
      };
    };
  }

  /** Follows redirects at the upstream provider until one leaves it (the callback). */
  async function follow(visit: ReturnType<typeof browser>, start: { location: string | undefined }): Promise<string> {
    let next = start;
    for (let hop = 0; hop < 10; hop += 1) {
      if (!next.location) throw new Error('the upstream provider stopped redirecting');
      if (!next.location.startsWith(issuer)) return next.location;
      next = await visit(next.location);
    }
    throw new Error('too many redirects at the upstream provider');
  }

  async function interaction(authorizationUrl: string) {
    const visit = browser();
    const first = await visit(authorizationUrl);
    const interactionUrl = first.location;
    if (!interactionUrl || !/\/interaction\//.test(interactionUrl))
      throw new Error(`expected the upstream login prompt, got ${first.status} ${interactionUrl}`);
    await visit(interactionUrl);
    return { visit, interactionUrl };
  }

  return {
    issuer,
    clientId,
    clientSecret,
    async authorize(authorizationUrl, sub) {
      const { visit, interactionUrl } = await interaction(authorizationUrl);
      return follow(visit, await visit(interactionUrl, { prompt: 'login', login: sub, password: 'any' }));
    },
    async cancel(authorizationUrl) {
      const { visit, interactionUrl } = await interaction(authorizationUrl);
      return follow(visit, await visit(`${interactionUrl}/abort`));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
