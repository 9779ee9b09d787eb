import type { IncomingMessage, ServerResponse } from 'node:http';
import { refuse as refuseWith, seeOther, sendHtml, type Route } from '@latchkey/http';
import type Provider from 'oidc-provider';
import { FACTORS_REQUIRED } from '../oidc/login-policy.js';
import { consentPage, consentRoute } from './consent.js';
import type { LoginContext } from './context.js';
import { PENDING_COOKIE, clearCookie, setCookie } from './cookies.js';
import { escapeHtml, page } from './html.js';
import { FACTORS_PAGE, PROGRESS_COOKIE } from './sign-in-flow.js';

/** What the provider's sign-in and interaction pages are made with. */
export interface InteractionDeps {
  context: LoginContext;
  provider: Provider;
  /** clients whose consent is implicit: their consent prompt (`prompt=consent`, as `offline_access` needs) is granted */
  firstParty: ReadonlySet<string>;
  /** the sign-in page, every factor's way in on it, with `hint` as the typed address */
  signInPage(hint: string): string;
}

type InteractionDetails = Awaited<ReturnType<Provider['interactionDetails']>>;

/** A refusal on the sign-in pages: the message and a way to start again. */
const refusalPage = (message: string) =>
  page('Sign in', `<p class="error" role="alert">${escapeHtml(message)}</p><p><a href="/login">Start again</a></p>`);
const refuse = (req: IncomingMessage, res: ServerResponse, status: number, message: string) =>
  refuseWith(req, res, status, message, refusalPage);

/**
 * The provider's login prompt: finish it with this browser's complete sign-in, continue a session that needs
 * more (a factor past its validity, or a step-up to the requested `acr_values`) on the factor page, or show
 * the sign-in form.
 */
async function interaction(deps: InteractionDeps, req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
  const { secure, flow, sendInteractionPage, inProvider } = deps.context;
  const { provider } = deps;
  let details: InteractionDetails;
  try {
    details = await inProvider(req, () => provider.interactionDetails(req, res));
  } catch {
    clearCookie(res, PENDING_COOKIE, { path: '/', secure });
    return refuse(req, res, 400, 'This sign-in has expired or belongs to another browser. Start again from the application.');
  }
  if (details.uid !== uid) return refuse(req, res, 400, 'This sign-in belongs to another browser.');
  if (details.prompt.name !== 'login') return consent(deps, req, res, details);
  const interactionDetails = details;
  const acrValues = typeof details.params['acr_values'] === 'string' ? details.params['acr_values'].split(' ').filter(Boolean) : [];
  const login = await flow.completeForInteraction(req, res, { acrValues }, async (accountId) => {
    // Another person's session in this browser ends as this sign-in begins: the request no longer refers to it.
    if (interactionDetails.session?.accountId && interactionDetails.session.accountId !== accountId) {
      interactionDetails.session = undefined;
      await inProvider(req, () => interactionDetails.save(Math.max(1, interactionDetails.exp - Math.floor(Date.now() / 1000))));
    }
  });
  if (login) {
    clearCookie(res, PENDING_COOKIE, { path: '/', secure });
    const result = { login: { ...login, remember: true } };
    return inProvider(req, () => provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false }));
  }
  setCookie(res, PENDING_COOKIE, uid, { path: '/', maxAgeSeconds: 3600, secure });
  // Only the session's factors fall short (nothing else asks for a new login): ask for what is missing.
  const reasons = details.prompt.reasons;
  if (reasons.length > 0 && reasons.every((reason) => reason === FACTORS_REQUIRED) && (await flow.continueFromSession(req, res))) {
    return seeOther(res, FACTORS_PAGE);
  }
  const hint = typeof details.params['login_hint'] === 'string' ? details.params['login_hint'] : '';
  return sendInteractionPage(req, res, details, deps.signInPage(hint));
}

/**
 * The consent prompt. A first-party client's consent is implicit: its grant holds every scope already (the
 * provider's `loadExistingGrant`), so a prompt asked for explicitly (`prompt=consent`, which OpenID Connect wants
 * before it grants `offline_access`) is answered with that grant. A third-party app gets the consent page.
 */
async function consent(deps: InteractionDeps, req: IncomingMessage, res: ServerResponse, details: InteractionDetails) {
  const { provider, firstParty } = deps;
  const { inProvider } = deps.context;
  const clientId = details.params['client_id'];
  const { grantId } = details;
  if (details.prompt.name === 'consent' && grantId && typeof clientId === 'string' && firstParty.has(clientId)) {
    return void (await inProvider(req, () =>
      provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true }),
    ));
  }
  // A third-party app: the person allows or denies on the consent page (web/consent.ts).
  if (details.prompt.name === 'consent' && typeof clientId === 'string' && !firstParty.has(clientId)) {
    return consentPage({ context: deps.context, provider }, req, res, details);
  }
  const refusal = { error: 'access_denied', error_description: 'consent is not available for this client' };
  await inProvider(req, () => provider.interactionFinished(req, res, refusal, { mergeWithLastSubmission: false }));
}

/** The provider's own sign-in page (no application waiting): signs the browser in to the provider. */
function standaloneSignIn({ context: { secure }, signInPage }: InteractionDeps, res: ServerResponse): void {
  // A sign-in started here completes here, never an authorization request or a sign-in left over in this browser.
  clearCookie(res, PENDING_COOKIE, { path: '/', secure });
  clearCookie(res, PROGRESS_COOKIE, { path: '/', secure });
  sendHtml(res, 200, signInPage(''));
}

/** The provider's own sign-in page (/login) and its interaction page (/interaction/:uid), as routes. */
export function createInteractionRoutes(deps: InteractionDeps): Route[] {
  return [
    { path: '/login', methods: ['GET', 'HEAD'], handler: (_req, res) => standaloneSignIn(deps, res) },
    {
      path: '/interaction/:uid',
      methods: ['GET', 'HEAD'],
      params: { uid: /^[A-Za-z0-9_-]{1,64}$/ },
      handler: (req, res, { params }) => interaction(deps, req, res, params['uid']!),
    },
    consentRoute({ context: deps.context, provider: deps.provider, firstParty: deps.firstParty }),
  ];
}
