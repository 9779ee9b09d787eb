import type { Factor } from '../factors/index.js';
import { escapeHtml } from './html.js';
import type { SecondFactors } from './second-factors.js';
import { passwordSetupForm } from './setup-pages.js';
import { PASSKEY_BUTTON, PASSKEY_SIGN_IN_SCRIPT, upstreamSignInLink } from './sign-in-page.js';

/** What the sections of the factors page offer: the second factors, and which other ways are configured. */
export interface FactorSectionsOptions {
  secondFactors: SecondFactors;
  /** whether passkeys are configured */
  passkeys: boolean;
  /** the upstream OpenID provider's name, when one is configured (factor AUTHORIZATION_CODE) */
  upstreamName?: string;
}

/**
 * A factor's section of the factors page (its form, or what stands in for one), for the account signing in, its
 * e-mail (when it has one) and whether a factor it lacks may be set up on the way; undefined: nothing to offer.
 */
type FactorSection = (
  options: FactorSectionsOptions,
  userId: string,
  email: string | undefined,
  enrolOnTheWay: boolean,
) => string | undefined | Promise<string | undefined>;

/** The opt-in of spec Multi-factor rules 5, on the forms of second steps. */
const REMEMBER_BROWSER = `<label class="inline"><input type="checkbox" name="remember" value="1"> Remember this browser for 30 days (it will not ask for this step here again)</label>
`;

const totpSection: FactorSection = async ({ secondFactors }, userId, _email, enrolOnTheWay) =>
  (await secondFactors.hasTotp(userId))
    ? `<form method="post" action="/login/totp">
<label for="totp">Code from your authenticator app</label>
<input id="totp" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
${REMEMBER_BROWSER}<button type="submit">Continue</button>
</form>`
    : enrolOnTheWay
      ? `<p>No authenticator app is set up for this account yet.</p>
<form method="post" action="/login/totp/setup"><button type="submit">Set up an authenticator app now</button></form>`
      : '<p>No authenticator app is set up for this account.</p>';

const passwordSection: FactorSection = async ({ secondFactors }, userId, email, enrolOnTheWay) => {
  if (!secondFactors.hasPassword || email === undefined) return undefined;
  return (await secondFactors.hasPassword(userId))
    ? `<form method="post" action="/login/password">
<input type="hidden" name="username" autocomplete="username" value="${escapeHtml(email)}">
<label for="password">Your password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
${REMEMBER_BROWSER}<button type="submit">Continue</button>
</form>`
    : enrolOnTheWay
      ? `<p>No password is set for this account yet.</p>
${passwordSetupForm('/login/password/setup', email, 'Set the password and continue')}`
      : '<p>No password is set for this account.</p>';
};

const recoveryCodeSection: FactorSection = async ({ secondFactors }, userId) =>
  (await secondFactors.recoveryCodesLeft(userId)) > 0
    ? `<form method="post" action="/login/recovery-code">
<label for="recovery">Recovery code</label>
<input id="recovery" name="code" autocomplete="off" required>
${REMEMBER_BROWSER}<button type="submit">Use the recovery code</button>
</form>`
    : undefined;

const passkeySection: FactorSection = ({ passkeys }) => (passkeys ? PASSKEY_BUTTON : undefined);

const upstreamSection: FactorSection = ({ upstreamName }) => (upstreamName ? upstreamSignInLink(upstreamName) : undefined);

const signInLinkSection: FactorSection = (_options, _userId, email) =>
  email === undefined
    ? undefined
    : `<form method="post" action="/ott/generate">
<input type="hidden" name="username" value="${escapeHtml(email)}">
<button type="submit">E-mail me a sign-in link</button>
</form>`;

/** Each factor's section, in the order the page lists them (a client certificate has none: it is not asked for here). */
const FACTOR_SECTIONS: readonly (readonly [Factor, FactorSection])[] = [
  ['TOTP', totpSection],
  ['PASSWORD', passwordSection],
  ['RECOVERY_CODE', recoveryCodeSection],
  ['WEBAUTHN', passkeySection],
  ['AUTHORIZATION_CODE', upstreamSection],
  ['OTT', signInLinkSection],
];

/** The sections of the factors still `needed`, in the page's order, one after the other. */
export async function factorSections(
  options: FactorSectionsOptions,
  needed: ReadonlySet<Factor>,
  userId: string,
  email: string | undefined,
  enrolOnTheWay: boolean,
): Promise<string[]> {
  const sections: string[] = [];
  for (const [factor, section] of FACTOR_SECTIONS) {
    if (!needed.has(factor)) continue;
    const html = await section(options, userId, email, enrolOnTheWay);
    if (html !== undefined) sections.push(html);
  }
  return sections;
}

/** The factors page's script: the passkey sign-in, when its section is shown. */
export const factorSectionsScript = (options: FactorSectionsOptions, needed: ReadonlySet<Factor>): string =>
  needed.has('WEBAUTHN') && options.passkeys ? PASSKEY_SIGN_IN_SCRIPT : '';
