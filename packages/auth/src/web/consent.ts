import type { IncomingMessage, ServerResponse } from 'node:http';
import { findUserById, recordConnectedApp } from '@latchkey/db';
import { pagePolicy, refuse as refuseWith, sendHtml, type Route } from '@latchkey/http';
import type Provider from 'oidc-provider';
import { describeScope } from '../scopes/vocabulary.js';
import type { LoginContext } from './context.js';
import { sameOriginForm } from './form.js';
import { escapeHtml, page } from './html.js';

// The consent page of a third-party app: who asks, what each scope not yet allowed lets it do, the account it asks
// about; Allow or Deny. The grant it makes is remembered per user and client (the Connected apps list).

type InteractionDetails = Awaited<ReturnType<Provider['interactionDetails']>>;

export interface ConsentDeps {
  context: LoginContext;
  provider: Provider;
}

/** What the OpenID scopes let an app know or do, in the words the consent page uses. */
const OPENID_WORDS: Record<string, string> = {
  openid: 'Know which Latchkey account you are (an identifier, nothing else).',
  email: 'See your e-mail address.',
  profile: 'See your name.',
  offline_access: 'Keep its access while you are not using it (until you revoke it).',
};

/** What a scope allows, in plain words. */
export const scopeWords = (scope: string) => OPENID_WORDS[scope] ?? describeScope(scope) ?? scope;

const refusalPage = (message: string) =>
  page('Allow access', `<p class="error" role="alert">${escapeHtml(message)}</p><p><a href="/account">Your account</a></p>`);
const refuse = (req: IncomingMessage, res: ServerResponse, status: number, message: string) =>
  refuseWith(req, res, status, message, refusalPage);

/** The scopes the request asks for and the grant does not hold yet: OpenID's, then the API's. */
function missingScopes(details: InteractionDetails): string[] {
  const prompt = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
  const api = Object.values(prompt.missingResourceScopes ?? {}).flat();
  return [...new Set([...(prompt.missingOIDCScope ?? []), ...api])];
}

/** A logo shown only from an https `logo_uri`: its URL and its origin (the page's CSP allows that one for images). */
function logoOf(uri: unknown): { url: string; origin: string } | undefined {
  if (typeof uri !== 'string') return undefined;
  try {
    const url = new URL(uri);
    return url.protocol === 'https:' ? { url: url.href, origin: url.origin } : undefined;
  } catch {
    return undefined;
  }
}

const link = (uri: unknown, text: string) =>
  typeof uri === 'string' && /^https?:/.test(uri) ? `<a href="${escapeHtml(uri)}" rel="noopener noreferrer">${escapeHtml(text)}</a>` : '';

/** The consent page for an interaction whose prompt is consent and whose client is third-party. */
export async function consentPage(deps: ConsentDeps, req: IncomingMessage, res: ServerResponse, details: InteractionDetails) {
  const { context, provider } = deps;
  const clientId = String(details.params['client_id']);
  const client = await context.inProvider(req, () => provider.Client.find(clientId));
  const accountId = details.session?.accountId;
  const user = accountId ? await findUserById(context.dbOf(req), accountId) : undefined;
  if (!client || !user) return refuse(req, res, 400, 'This request can no longer be answered. Start again from the application.');
  const metadata = client.metadata() as Record<string, unknown>;
  const name = typeof metadata['client_name'] === 'string' && metadata['client_name'] ? metadata['client_name'] : clientId;
  const logo = logoOf(metadata['logo_uri']);
  // Nothing new (the app asked to be confirmed again, prompt=consent): what it asks for is listed.
  const missing = missingScopes(details);
  const scopes =
    missing.length > 0
      ? missing
      : String(details.params['scope'] ?? '')
          .split(' ')
          .filter(Boolean);
  const links = [
    link(metadata['client_uri'], 'Its website'),
    link(metadata['policy_uri'], 'privacy policy'),
    link(metadata['tos_uri'], 'terms of service'),
  ]
    .filter(Boolean)
    .join(' · ');
  const body = `${logo ? `<p><img src="${escapeHtml(logo.url)}" alt="" width="64" height="64"></p>` : ''}
<p><strong id="app-name">${escapeHtml(name)}</strong> <small>(${escapeHtml(clientId)})</small> asks to use your Latchkey account <strong id="account-email">${escapeHtml(user.email)}</strong>. It would be able to:</p>
<ul id="scopes">${scopes.map((scope) => `<li data-scope="${escapeHtml(scope)}">${escapeHtml(scopeWords(scope))}</li>`).join('\n')}</ul>
<p>It can never do more than you can yourself. You can revoke its access at any time on <a href="/account">your account page</a> (Connected apps).</p>
${links ? `<p>${links}</p>` : ''}
<form method="post" action="/interaction/${escapeHtml(details.uid)}/consent">
<button type="submit" name="decision" value="allow" autofocus>Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`;
  // The form's redirects end at the app's validated redirect URI (CSP Level 3 form-action), the logo at its origin.
  const targets = await context.flow.returnTargetsOf(req, details);
  const policy = `${pagePolicy(targets)}${logo ? `; img-src ${logo.origin}` : ''}`;
  sendHtml(res, 200, page(`Allow ${name}?`, body), { 'content-security-policy': policy });
}

/**
 * The consent form's answer: only from our own origin, only with this browser's interaction (its cookie) at the
 * consent prompt of a third-party app. Allow grants the missing scopes on the app's one grant for this user
 * (remembered across sessions); Deny returns `access_denied` to the app.
 */
async function consentAnswer(
  deps: ConsentDeps & { firstParty: ReadonlySet<string> },
  req: IncomingMessage,
  res: ServerResponse,
  uid: string,
) {
  const { context, provider } = deps;
  const fields = await sameOriginForm(req, res, context.origin, refuse);
  if (!fields) return;
  let details: InteractionDetails;
  try {
    details = await context.inProvider(req, () => provider.interactionDetails(req, res));
  } catch {
    return refuse(req, res, 400, 'This request has expired or belongs to another browser. Start again from the application.');
  }
  const clientId = details.params['client_id'];
  const accountId = details.session?.accountId;
  if (
    details.uid !== uid ||
    details.prompt.name !== 'consent' ||
    typeof clientId !== 'string' ||
    !accountId ||
    deps.firstParty.has(clientId)
  ) {
    return refuse(req, res, 400, 'This request does not ask for your consent.');
  }
  const decision = fields['decision'];
  if (decision === 'deny') {
    const refusal = { error: 'access_denied', error_description: 'the user denied access' };
    return void (await context.inProvider(req, () => provider.interactionFinished(req, res, refusal, { mergeWithLastSubmission: false })));
  }
  if (decision !== 'allow') return refuse(req, res, 400, 'decision must be allow or deny.');
  const prompt = details.prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  const grantId = await context.inProvider(req, async () => {
    const existing = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
    const grant = existing ?? new provider.Grant({ accountId, clientId });
    if (prompt.missingOIDCScope) grant.addOIDCScope(prompt.missingOIDCScope.join(' '));
    if (prompt.missingOIDCClaims) grant.addOIDCClaims(prompt.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(prompt.missingResourceScopes ?? {}))
      grant.addResourceScope(indicator, scopes.join(' '));
    const id = await grant.save();
    const resources = Object.keys(grant.resources ?? {});
    const scope = [
      ...new Set([grant.getOIDCScope(), ...resources.map((resource) => grant.getResourceScope(resource))].join(' ').split(' ')),
    ]
      .filter(Boolean)
      .join(' ');
    await recordConnectedApp(context.dbOf(req), { userId: accountId, clientId, grantId: id, scope });
    context.audit.record({ type: 'app.allowed', details: { clientId, scope }, actor: accountId, subject: accountId, request: req });
    return id;
  });
  await context.inProvider(req, () => provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true }));
}

/** The consent form's route. */
export function consentRoute(deps: ConsentDeps & { firstParty: ReadonlySet<string> }): Route {
  return {
    path: '/interaction/:uid/consent',
    methods: ['POST'],
    params: { uid: /^[A-Za-z0-9_-]{1,64}$/ },
    handler: (req, res, { params }) => consentAnswer(deps, req, res, params['uid']!),
  };
}
