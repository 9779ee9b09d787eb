import { describe, expect, it } from 'vitest';
import { SIGN_IN_FACTORS } from '../factor-registry.js';
import { DEFAULT_ACR_LEVELS } from '../factors/acr.js';
import type { AccountFacts, Factor } from '../factors/types.js';
import { judgeSignIn, type SignInPolicy } from './requirement.js';

const member: AccountFacts = { email: 'bob@acme.test', roles: ['VIEWER'], superAdmin: false };
const policy = (contributed: Factor[]): SignInPolicy => ({
  rules: [],
  acrLevels: DEFAULT_ACR_LEVELS,
  contributed: new Set(contributed),
  factors: SIGN_IN_FACTORS,
});
const ott = [{ factor: 'OTT' as const, issuedAt: 1_000 }];

describe('a requested acr (RFC 9470 step-up, acr_values) that the sign-in does not reach yet', () => {
  it('lists each way to it once, fewest factors first, and none that asks for more than another (OTT held: TOTP, not password and TOTP)', () => {
    const standing = judgeSignIn(policy(['OTT', 'TOTP', 'RECOVERY_CODE', 'PASSWORD', 'WEBAUTHN']), member, ott, {
      acrValues: ['urn:latchkey:acr:2fa'],
      now: 1_000,
    });
    expect(standing).toEqual({ complete: false, reason: 'acr', stillNeeded: [['TOTP'], ['PASSWORD'], ['RECOVERY_CODE'], ['WEBAUTHN']] });
  });

  it('never offers a way through a factor this deployment does not verify', () => {
    const standing = judgeSignIn(policy(['OTT', 'TOTP']), member, ott, { acrValues: ['urn:latchkey:acr:2fa'], now: 1_000 });
    expect(standing).toEqual({ complete: false, reason: 'acr', stillNeeded: [['TOTP']] });
  });

  it('is complete, with amr and acr, once reached; a stronger level satisfies a weaker request', () => {
    const passkey = [{ factor: 'WEBAUTHN' as const, issuedAt: 1_000 }];
    expect(judgeSignIn(policy(['OTT', 'WEBAUTHN']), member, passkey, { acrValues: ['urn:latchkey:acr:2fa'], now: 1_000 })).toEqual({
      complete: true,
      amr: ['swk'],
      acr: 'urn:latchkey:acr:phr',
    });
  });
});
