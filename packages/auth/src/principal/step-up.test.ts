import { describe, expect, it } from 'vitest';
import { ACR_ONE_FACTOR, ACR_PHISHING_RESISTANT, ACR_TWO_FACTOR } from '../factors/acr.js';
import {
  combineStepUp,
  CREDENTIAL_CHANGE_STEP_UP,
  meetsStepUp,
  requireStepUp,
  StepUpRequired,
  stepUpChallengeHeader,
  validateStepUp,
} from './step-up.js';

const NOW = 1_800_000_000;

describe('spec Multi-factor rules 6 / RFC 9470: meetsStepUp', () => {
  it('acr: the same level or a stronger one meets it; a weaker, unknown or missing one does not', () => {
    const phr = { acr: ACR_PHISHING_RESISTANT };
    const twoFactor = { acr: ACR_TWO_FACTOR };
    expect(meetsStepUp({ acr: ACR_PHISHING_RESISTANT, authTime: NOW }, phr, NOW)).toBe(true);
    expect(meetsStepUp({ acr: ACR_PHISHING_RESISTANT, authTime: NOW }, twoFactor, NOW)).toBe(true);
    expect(meetsStepUp({ acr: ACR_TWO_FACTOR, authTime: NOW }, twoFactor, NOW)).toBe(true);
    expect(meetsStepUp({ acr: ACR_TWO_FACTOR, authTime: NOW }, phr, NOW)).toBe(false);
    expect(meetsStepUp({ acr: ACR_ONE_FACTOR, authTime: NOW }, twoFactor, NOW)).toBe(false);
    // the provider's former values and anything else unknown meet no level
    expect(meetsStepUp({ acr: 'urn:latchkey:acr:passkey', authTime: NOW }, phr, NOW)).toBe(false);
    expect(meetsStepUp({ acr: null, authTime: NOW }, twoFactor, NOW)).toBe(false);
    expect(meetsStepUp({ authTime: NOW }, twoFactor, NOW)).toBe(false);
  });

  it('maxAge: auth_time at most maxAge seconds ago; a missing auth_time meets no age', () => {
    expect(meetsStepUp({ acr: null, authTime: NOW - 300 }, CREDENTIAL_CHANGE_STEP_UP, NOW)).toBe(true);
    expect(meetsStepUp({ acr: null, authTime: NOW - 301 }, CREDENTIAL_CHANGE_STEP_UP, NOW)).toBe(false);
    expect(meetsStepUp({ acr: null, authTime: null }, CREDENTIAL_CHANGE_STEP_UP, NOW)).toBe(false);
    expect(meetsStepUp({ acr: ACR_PHISHING_RESISTANT, authTime: NOW - 1000 }, { acr: ACR_TWO_FACTOR, maxAge: 900 }, NOW)).toBe(false);
    expect(meetsStepUp({ acr: ACR_PHISHING_RESISTANT, authTime: NOW - 900 }, { acr: ACR_TWO_FACTOR, maxAge: 900 }, NOW)).toBe(true);
  });

  it('a guest meets nothing', () => {
    expect(meetsStepUp(null, CREDENTIAL_CHANGE_STEP_UP, NOW)).toBe(false);
    expect(meetsStepUp(undefined, { acr: ACR_ONE_FACTOR }, NOW)).toBe(false);
  });

  it('requireStepUp throws StepUpRequired carrying the requirement', () => {
    expect(() => requireStepUp({ acr: ACR_ONE_FACTOR, authTime: NOW }, { acr: ACR_TWO_FACTOR }, NOW)).toThrow(StepUpRequired);
    expect(() => requireStepUp({ acr: ACR_TWO_FACTOR, authTime: NOW }, { acr: ACR_TWO_FACTOR }, NOW)).not.toThrow();
    try {
      requireStepUp(null, CREDENTIAL_CHANGE_STEP_UP, NOW);
    } catch (error) {
      expect((error as StepUpRequired).requirement).toEqual({ maxAge: 300 });
      expect((error as StepUpRequired).code).toBe('INSUFFICIENT_USER_AUTHENTICATION');
    }
  });
});

describe('RFC 9470 §3: the WWW-Authenticate challenge', () => {
  it('names acr_values and max_age only when required', () => {
    expect(stepUpChallengeHeader({ acr: ACR_PHISHING_RESISTANT, maxAge: 300 })).toBe(
      'Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="urn:latchkey:acr:phr", max_age=300',
    );
    expect(stepUpChallengeHeader({ acr: ACR_PHISHING_RESISTANT })).toBe(
      'Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="urn:latchkey:acr:phr"',
    );
    expect(stepUpChallengeHeader({ maxAge: 300 })).toBe(
      'Bearer error="insufficient_user_authentication", error_description="More recent authentication is required", max_age=300',
    );
  });

  it('several requirements combine into one that meets them all: the stronger level, the shorter age', () => {
    expect(combineStepUp({ acr: ACR_PHISHING_RESISTANT }, { maxAge: 300 })).toEqual({ acr: ACR_PHISHING_RESISTANT, maxAge: 300 });
    expect(combineStepUp({ acr: ACR_TWO_FACTOR, maxAge: 900 }, { acr: ACR_PHISHING_RESISTANT, maxAge: 300 })).toEqual({
      acr: ACR_PHISHING_RESISTANT,
      maxAge: 300,
    });
    expect(combineStepUp({ acr: ACR_PHISHING_RESISTANT, maxAge: 100 }, { acr: ACR_TWO_FACTOR, maxAge: 900 })).toEqual({
      acr: ACR_PHISHING_RESISTANT,
      maxAge: 100,
    });
    expect(combineStepUp({ maxAge: 300 }, { maxAge: 300 })).toEqual({ maxAge: 300 });
  });
});

describe('validateStepUp (start-up)', () => {
  it('accepts a known level and/or a whole number of seconds', () => {
    expect(validateStepUp({ acr: ACR_TWO_FACTOR, maxAge: 900 }, 'x')).toEqual({ acr: ACR_TWO_FACTOR, maxAge: 900 });
    expect(validateStepUp({ acr: null, maxAge: 300 }, 'x')).toEqual({ maxAge: 300 });
  });
  it('refuses an unknown level, a bad age, or nothing at all', () => {
    expect(() => validateStepUp({ acr: 'urn:latchkey:acr:otp' }, 'Mutation.x')).toThrow(
      /Mutation.x: acr "urn:latchkey:acr:otp" is not a known level/,
    );
    expect(() => validateStepUp({ maxAge: -1 }, 'x')).toThrow(/maxAge/);
    expect(() => validateStepUp({ maxAge: 1.5 }, 'x')).toThrow(/maxAge/);
    expect(() => validateStepUp({}, 'x')).toThrow(/acr, maxAge or both/);
  });
});
