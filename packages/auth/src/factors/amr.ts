import type { FactorGrant, FactorIdentity } from './types.js';

/** Reported besides the factors' methods when a sign-in used more than one factor. */
const MFA = 'mfa';

/** Every `amr` value a server knowing these factors issues (the operator CLI mints tokens with these only). */
export const issuedAmrValues = (factors: readonly FactorIdentity[]): readonly string[] => [
  ...new Set([...factors.map((factor) => factor.amr), MFA]),
];

/**
 * The `amr` of a sign-in: the RFC 8176 methods of its factors in the order they were used, each once, plus `mfa`
 * when more than one factor was used (spec Resources: OTT + TOTP is `["otp", "mfa"]`).
 */
export function amrOf(grants: readonly FactorGrant[], factors: readonly FactorIdentity[]): string[] {
  const used = [...new Set([...grants].sort((a, b) => a.issuedAt - b.issuedAt).map((grant) => grant.factor))];
  // A factor no longer registered (a deployment that dropped it) reports no method of its own.
  const methods = [...new Set(used.flatMap((authority) => factors.find((factor) => factor.authority === authority)?.amr ?? []))];
  return used.length > 1 ? [...methods, MFA] : methods;
}
