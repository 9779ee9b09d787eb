import type { Factor, FactorGrant } from './types.js';

/**
 * RFC 8176 method of each factor. TOTP and recovery codes are one-time codes (`otp`); a sign-in through an
 * upstream OpenID provider has no RFC 8176 value: it is reported as `fed` (federated), as other providers do.
 */
export const AMR_OF: Record<Factor, string> = {
  PASSWORD: 'pwd',
  OTT: 'otp',
  WEBAUTHN: 'swk',
  X509: 'hwk',
  AUTHORIZATION_CODE: 'fed',
  TOTP: 'otp',
  RECOVERY_CODE: 'otp',
};

/** Reported besides the factors' methods when a sign-in used more than one factor. */
const MFA = 'mfa';

/** Every `amr` value this server issues (the operator CLI mints tokens with these only). */
export const ISSUED_AMR_VALUES: readonly string[] = [...new Set([...Object.values(AMR_OF), MFA])];

/**
 * The `amr` of a sign-in: the methods of its factors in the order they were used, each once, plus `mfa`
 * when more than one factor was used (spec Resources: OTT + TOTP is `["otp", "mfa"]`).
 */
export function amrOf(grants: readonly FactorGrant[]): string[] {
  const factors = [...new Set([...grants].sort((a, b) => a.issuedAt - b.issuedAt).map((grant) => grant.factor))];
  const methods = [...new Set(factors.map((factor) => AMR_OF[factor]))];
  return factors.length > 1 ? [...methods, MFA] : methods;
}
