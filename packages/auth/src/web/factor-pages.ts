import type { IncomingMessage, ServerResponse } from 'node:http';
import { seeOther, type Route } from '@latchkey/http';
import type { LoginContext } from './context.js';
import type { FactorStep, FactorWeb, PagePart } from './factor-module.js';
import { describeFactors, labelOf } from './factor-names.js';
import { emailOf } from './factor-steps.js';
import { escapeHtml, page } from './html.js';
import { FACTORS_PAGE } from './sign-in-flow.js';

/** A factor's pages, beside the authority they prove. */
export interface RegisteredWeb {
  authority: string;
  web: FactorWeb;
}

/** The sections of the factors still `needed`, in the registry's order; each factor's script once. */
async function sectionsOf(
  webs: readonly RegisteredWeb[],
  needed: ReadonlySet<string>,
  step: FactorStep,
  req: IncomingMessage,
): Promise<PagePart[]> {
  const sections: PagePart[] = [];
  for (const { authority, web } of webs) {
    if (!needed.has(authority) || !web.factorsPageSection) continue;
    const section = await web.factorsPageSection(step, req);
    if (section) sections.push(section);
  }
  return sections;
}

/** The factors page: who is signed in and how so far, what is still needed, and a section per factor that can give it. */
async function factorsPage(
  context: LoginContext,
  webs: readonly RegisteredWeb[],
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { flow, factors } = context;
  const pending = await flow.pendingSignIn(req, res);
  if (!pending) return seeOther(res, '/login');
  const email = await emailOf(context.dbOf(req), pending.userId);
  const used = describeFactors(factors, pending.factors);
  const why =
    pending.standing.reason === 'acr' ? 'The application asks for a stronger sign-in.' : 'Your account needs one more step to sign in.';
  const alternatives = pending.standing.stillNeeded
    .map((needed) => `<li>${needed.map((factor) => escapeHtml(labelOf(factors, factor))).join(' and ')}</li>`)
    .join('');
  // A factor the account lacks may be set up on the way only for its own rules, never for an application's
  // step-up: a new credential planted by whoever holds the first factor would make the stronger sign-in moot.
  const step: FactorStep = { userId: pending.userId, email, enrolOnTheWay: pending.standing.reason === 'rule' };
  const sections = await sectionsOf(webs, new Set(pending.standing.stillNeeded.flat()), step, req);
  await context.sendSignInPage(
    req,
    res,
    200,
    page(
      'One more step',
      `<p>Signed in as <strong>${escapeHtml(email ?? '')}</strong> with ${escapeHtml(used)}. ${escapeHtml(why)}</p>
<p>Still needed, any one of:</p>
<ul id="still-needed">${alternatives}</ul>
${sections.map((section) => section.html).join('\n<p>or</p>\n')}
<p><a href="/login">Start again</a></p>`,
      scriptsOf(sections),
    ),
  );
}

/** The scripts of a page's parts, each once (two parts may share one, as the passkey button does). */
export const scriptsOf = (parts: readonly PagePart[]): string => [...new Set(parts.flatMap((part) => part.script ?? []))].join('\n');

/**
 * The factors page (spec Multi-factor rules 1: the service moves the user between factor pages until the rule
 * is met): what this sign-in still needs and, from each factor that can give it, the way to.
 */
export function createFactorsPage(context: LoginContext, webs: readonly RegisteredWeb[]): Route {
  return { path: FACTORS_PAGE, methods: ['GET', 'HEAD'], handler: (req, res) => factorsPage(context, webs, req, res) };
}
