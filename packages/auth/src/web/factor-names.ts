import type { Factor, FactorGrant, FactorIdentity } from '../factors/index.js';

/** How the pages name a factor ("a passkey"); a factor no longer registered is "unknown". */
export const labelOf = (factors: readonly FactorIdentity[], authority: Factor): string =>
  factors.find((factor) => factor.authority === authority)?.label ?? 'unknown';

/** The factors of a sign-in in words, in the order they were used: "a passkey and a recovery code". */
export function describeFactors(factors: readonly FactorIdentity[], grants: readonly FactorGrant[]): string {
  return [...grants]
    .sort((a, b) => a.issuedAt - b.issuedAt)
    .map((grant) => labelOf(factors, grant.factor))
    .join(' and ');
}
