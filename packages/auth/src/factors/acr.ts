import type { AcrLevel, Factor, FactorGrant } from './types.js';

/**
 * The default assurance levels, weakest first: one factor; two factors; phishing-resistant (a passkey or a
 * client certificate, which bind the proof to this site). A stronger level satisfies a weaker requirement.
 */
export const DEFAULT_ACR_LEVELS: readonly AcrLevel[] = [
  { value: 'urn:latchkey:acr:1fa', anyOf: [['PASSWORD'], ['OTT'], ['WEBAUTHN'], ['X509'], ['AUTHORIZATION_CODE']] },
  {
    value: 'urn:latchkey:acr:2fa',
    anyOf: [
      ['OTT', 'TOTP'],
      ['OTT', 'PASSWORD'],
      ['PASSWORD', 'TOTP'],
      ['OTT', 'RECOVERY_CODE'],
      ['PASSWORD', 'RECOVERY_CODE'],
      ['AUTHORIZATION_CODE', 'TOTP'],
    ],
  },
  { value: 'urn:latchkey:acr:phr', anyOf: [['WEBAUTHN'], ['X509']] },
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
