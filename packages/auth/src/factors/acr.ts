import type { AcrLevel, Factor, FactorGrant } from './types.js';

/** The assurance levels' `acr` values (defined here once; step-up requirements name them too). */
export const ACR_ONE_FACTOR = 'urn:latchkey:acr:1fa';
export const ACR_TWO_FACTOR = 'urn:latchkey:acr:2fa';
export const ACR_PHISHING_RESISTANT = 'urn:latchkey:acr:phr';

/**
 * The default assurance levels, weakest first: one factor; two factors; phishing-resistant (a passkey or a
 * client certificate, which bind the proof to this site). A stronger level satisfies a weaker requirement.
 */
export const DEFAULT_ACR_LEVELS: readonly AcrLevel[] = [
  { value: ACR_ONE_FACTOR, anyOf: [['PASSWORD'], ['OTT'], ['WEBAUTHN'], ['X509'], ['AUTHORIZATION_CODE']] },
  {
    value: ACR_TWO_FACTOR,
    anyOf: [
      ['OTT', 'TOTP'],
      ['OTT', 'PASSWORD'],
      ['PASSWORD', 'TOTP'],
      ['OTT', 'RECOVERY_CODE'],
      ['PASSWORD', 'RECOVERY_CODE'],
      ['AUTHORIZATION_CODE', 'TOTP'],
    ],
  },
  { value: ACR_PHISHING_RESISTANT, anyOf: [['WEBAUTHN'], ['X509']] },
];

/** The strongest level the factors reach, or undefined when they reach none. */
export function acrOf(grants: readonly FactorGrant[], levels: readonly AcrLevel[] = DEFAULT_ACR_LEVELS): string | undefined {
  const held = new Set<Factor>(grants.map((grant) => grant.factor));
  for (let index = levels.length - 1; index >= 0; index--) {
    if (levels[index]!.anyOf.some((set) => set.every((factor) => held.has(factor)))) return levels[index]!.value;
  }
  return undefined;
}

/** Whether an `acr` satisfies a required one: the same level or a stronger one (unknown values satisfy nothing). */
export function acrSatisfies(actual: string | undefined, required: string, levels: readonly AcrLevel[] = DEFAULT_ACR_LEVELS): boolean {
  const rank = (value: string | undefined) => levels.findIndex((level) => level.value === value);
  const requiredRank = rank(required);
  return requiredRank >= 0 && rank(actual) >= requiredRank;
}
