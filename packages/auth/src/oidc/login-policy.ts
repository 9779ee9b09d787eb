// The login prompt's one check beyond oidc-provider's: an existing session must still meet the account's multi-factor
// rules and the request's `acr_values`.

/** What the login prompt asks the application about a browser's existing session. */
export interface SessionStandingQuery {
  sessionUid: string;
  accountId: string;
  /** the `acr_values` of the authorization request (RFC 9470 step-up), possibly empty */
  acrValues: string[];
  /** the request's Cookie header (the application's own cookies, e.g. a remembered browser) */
  cookieHeader: string | undefined;
}

/** The reason the login prompt gives when an existing session does not meet the rules or the requested acr. */
export const FACTORS_REQUIRED = 'latchkey_factors_required';

/** oidc-provider's default prompts, with one more login check: the session's factors must still suffice. */
export function loginPolicy(
  policy: typeof import('oidc-provider').interactionPolicy,
  sessionNeedsLogin: (query: SessionStandingQuery) => Promise<boolean>,
) {
  const prompts = policy.base();
  prompts.get('login')!.checks.add(
    new policy.Check(FACTORS_REQUIRED, 'additional authentication factors are required', async (ctx) => {
      const { session, params } = ctx.oidc;
      // No session: the default checks prompt already. A login just finished here was judged complete first.
      if (!session?.accountId || ctx.oidc.result?.['login']) return policy.Check.NO_NEED_TO_PROMPT;
      const acrValues = typeof params?.['acr_values'] === 'string' ? params['acr_values'].split(' ').filter(Boolean) : [];
      const needed = await sessionNeedsLogin({
        sessionUid: session.uid,
        accountId: session.accountId,
        acrValues,
        cookieHeader: ctx.get('cookie') || undefined,
      });
      return needed ? policy.Check.REQUEST_PROMPT : policy.Check.NO_NEED_TO_PROMPT;
    }),
  );
  return prompts;
}
