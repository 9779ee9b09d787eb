import { page } from './html.js';
import type { RegisteredWeb } from './factor-pages.js';
import { scriptsOf } from './factor-pages.js';

/** The sign-in page: every factor's way in (an e-mailed link, a passkey, an upstream provider), one after the other. */
export function signInPage(webs: readonly RegisteredWeb[], hint: string): string {
  const entries = webs.flatMap(({ web }) => (web.signInEntry ? [web.signInEntry(hint)] : []));
  return page('Sign in', `\n${entries.map((entry) => entry.html).join('\n<p>or</p>\n')}`, scriptsOf(entries));
}
