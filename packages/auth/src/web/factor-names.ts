import type { Factor } from '../factors/index.js';

/** How each factor is named on the pages. */
export const FACTOR_NAMES: Record<Factor, string> = {
  OTT: 'a sign-in link or code by e-mail',
  WEBAUTHN: 'a passkey',
  TOTP: 'a code from your authenticator app',
  RECOVERY_CODE: 'a recovery code',
  PASSWORD: 'your password',
  X509: 'a client certificate',
  AUTHORIZATION_CODE: 'your organization’s sign-in',
};

/** The factors of a sign-in in words, in the order they were used: "a passkey and a recovery code". */
export function describeFactors(factors: readonly { factor: Factor; issuedAt: number }[]): string {
  return [...factors]
    .sort((a, b) => a.issuedAt - b.issuedAt)
    .map((grant) => FACTOR_NAMES[grant.factor])
    .join(' and ');
}
