import { formTargetOf } from '@latchkey/http';
import type { KoaContextWithOIDC } from 'oidc-provider';

const text = (value: unknown) => String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
export const barePage = (title: string, body: string) =>
  `<!doctype html><html lang="en"><meta charset="utf-8"><title>${text(title)}</title><main><h1>${text(title)}</h1>${body}</main></html>`;
/**
 * The provider's pages carry no script and load nothing; their forms post only to the provider. The sign-out
 * confirmation's form ends in a redirect to the client's validated `post_logout_redirect_uri`, which CSP Level 3's
 * `form-action` governs too: that one origin is named beside 'self'.
 */
const providerPagePolicy = (formTargets: readonly string[] = []) =>
  `default-src 'none'; style-src 'unsafe-inline'; form-action ${["'self'", ...formTargets].join(' ')}; frame-ancestors 'none'; base-uri 'none'`;
const PROVIDER_PAGE_CSP = providerPagePolicy();

/** Where the sign-out confirmation returns: the `post_logout_redirect_uri` the provider checked against the client. */
function logoutReturnTargets(ctx: KoaContextWithOIDC): string[] {
  const uri = ctx.oidc.params?.['post_logout_redirect_uri'];
  const client = ctx.oidc.client;
  if (typeof uri !== 'string' || !client?.postLogoutRedirectUriAllowed(uri)) return [];
  const target = formTargetOf(uri);
  return target ? [target] : [];
}

/**
 * The pages the provider renders itself (the sign-out confirmation, the signed-out page, its errors), in the
 * application's style (`renderPage`, whose `body` is HTML; a bare page by default).
 */
export function providerPages(renderPage: (title: string, body: string) => string = barePage) {
  return {
    signOut: {
      // The provider's sign-out confirmation (its form carries the provider's own CSRF token).
      logoutSource: async (ctx: KoaContextWithOIDC, form: string) => {
        ctx.type = 'html';
        ctx.set('content-security-policy', providerPagePolicy(logoutReturnTargets(ctx)));
        ctx.body = renderPage(
          'Sign out',
          `<p>Sign out of Latchkey in this browser?</p>${form}
<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Sign out</button>
<button type="submit" form="op.logoutForm">Stay signed in</button>`,
        );
      },
      postLogoutSuccessSource: async (ctx: KoaContextWithOIDC) => {
        ctx.type = 'html';
        ctx.set('content-security-policy', PROVIDER_PAGE_CSP);
        ctx.body = renderPage(
          'Signed out',
          '<p role="status">You are signed out of Latchkey in this browser.</p><p><a href="/login">Sign in again</a></p>',
        );
      },
    },
    renderError: async (ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }) => {
      ctx.type = 'html';
      ctx.set('content-security-policy', PROVIDER_PAGE_CSP);
      ctx.body = renderPage('Sign-in error', `<p>${text(out.error)}: ${text(out.error_description)}</p><p><a href="/">Start again</a></p>`);
    },
  };
}
