import { describe, expect, it } from 'vitest';
import { SIGN_IN_FACTORS } from '../factor-registry.js';
import {
  acrOf,
  acrSatisfies,
  amrOf as amrOfFactors,
  evaluateRules,
  FactorRuleError,
  secondStepsOf,
  validateRules as validateRulesAmong,
  type AccountFacts,
  type FactorGrant,
  type FactorRule,
} from './index.js';

/** The amr of grants, and rules validated, among the factors this server registers. */
const amrOf = (grants: readonly FactorGrant[]) => amrOfFactors(grants, SIGN_IN_FACTORS);
const registered = new Set(SIGN_IN_FACTORS.map((factor) => factor.authority));
const validateRules = (rules: readonly FactorRule[], contributed: ReadonlySet<string>) =>
  validateRulesAmong(rules, contributed, registered);
/** What a remembered browser spares: the registered factors' second steps. */
const remembered = { spares: secondStepsOf(SIGN_IN_FACTORS) };

const admin: AccountFacts = { email: 'carol@globex.test', roles: ['ADMIN'], superAdmin: false };
const viewer: AccountFacts = { email: 'bob@acme.test', roles: ['VIEWER'], superAdmin: false };
const root: AccountFacts = { email: 'root@latchkey.test', roles: [], superAdmin: true };

/** The rule for admins: they sign in with a passkey alone, or with OTT + TOTP. */
const adminsRule: FactorRule = {
  name: 'admins',
  appliesTo: { roles: ['OWNER', 'ADMIN'], superAdmins: true },
  anyOf: [[{ factor: 'WEBAUTHN' }], [{ factor: 'OTT' }, { factor: 'TOTP', maxAgeSeconds: 3600 }]],
};

describe('amr (spec Resources: RFC 8176 values, mfa when more than one factor was used)', () => {
  it.each([
    [['OTT'], ['otp']],
    [['WEBAUTHN'], ['swk']],
    [['PASSWORD'], ['pwd']],
    [['X509'], ['hwk']],
    [['AUTHORIZATION_CODE'], ['fed']],
    [
      ['OTT', 'TOTP'],
      ['otp', 'mfa'],
    ],
    [
      ['OTT', 'PASSWORD'],
      ['otp', 'pwd', 'mfa'],
    ],
    [
      ['PASSWORD', 'OTT'],
      ['pwd', 'otp', 'mfa'],
    ],
    [
      ['OTT', 'RECOVERY_CODE'],
      ['otp', 'mfa'],
    ],
    [
      ['WEBAUTHN', 'TOTP'],
      ['swk', 'otp', 'mfa'],
    ],
  ] as const)('%j -> %j', (factors, amr) => {
    expect(amrOf(factors.map((factor, index) => ({ factor, issuedAt: 1000 + index })))).toEqual(amr);
  });

  it('the same factor proven twice is one factor (no mfa)', () => {
    expect(
      amrOf([
        { factor: 'OTT', issuedAt: 1 },
        { factor: 'OTT', issuedAt: 2 },
      ]),
    ).toEqual(['otp']);
  });
});

describe('acr levels, weakest first: one factor, two factors, phishing-resistant', () => {
  it('each sign-in reaches the strongest level its factors allow', () => {
    const grants = (...factors: string[]) => factors.map((factor) => ({ factor, issuedAt: 1 }) as never);
    expect(acrOf(grants('OTT'))).toBe('urn:latchkey:acr:1fa');
    expect(acrOf(grants('OTT', 'TOTP'))).toBe('urn:latchkey:acr:2fa');
    expect(acrOf(grants('WEBAUTHN'))).toBe('urn:latchkey:acr:phr');
    expect(acrOf(grants('TOTP'))).toBeUndefined();
    expect(acrOf([])).toBeUndefined();
  });

  it('a stronger acr satisfies a weaker requirement, never the reverse; unknown values satisfy nothing', () => {
    expect(acrSatisfies('urn:latchkey:acr:phr', 'urn:latchkey:acr:2fa')).toBe(true);
    expect(acrSatisfies('urn:latchkey:acr:2fa', 'urn:latchkey:acr:2fa')).toBe(true);
    expect(acrSatisfies('urn:latchkey:acr:1fa', 'urn:latchkey:acr:2fa')).toBe(false);
    expect(acrSatisfies('urn:latchkey:acr:2fa', 'urn:latchkey:acr:phr')).toBe(false);
    expect(acrSatisfies('urn:other', 'urn:latchkey:acr:1fa')).toBe(false);
    expect(acrSatisfies(undefined, 'urn:latchkey:acr:1fa')).toBe(false);
    expect(acrSatisfies('urn:latchkey:acr:phr', 'urn:unknown')).toBe(false);
  });
});

describe('multi-factor rules (spec Multi-factor rules 1-3)', () => {
  const now = 10_000;

  it('rule 2 alternatives: a passkey alone meets the admins rule; OTT alone still needs TOTP', () => {
    expect(evaluateRules([adminsRule], admin, [{ factor: 'WEBAUTHN', issuedAt: now }], now)).toEqual({ met: true });
    expect(evaluateRules([adminsRule], admin, [{ factor: 'OTT', issuedAt: now }], now)).toEqual({
      met: false,
      rule: 'admins',
      stillNeeded: [['WEBAUTHN'], ['TOTP']],
    });
    expect(
      evaluateRules(
        [adminsRule],
        admin,
        [
          { factor: 'OTT', issuedAt: now },
          { factor: 'TOTP', issuedAt: now },
        ],
        now,
      ),
    ).toEqual({ met: true });
  });

  it('rule 2 validity durations: a factor past its duration no longer counts', () => {
    const grants = [
      { factor: 'OTT' as const, issuedAt: now - 7200 },
      { factor: 'TOTP' as const, issuedAt: now - 3601 },
    ];
    expect(evaluateRules([adminsRule], admin, grants, now)).toMatchObject({ met: false, stillNeeded: [['WEBAUTHN'], ['TOTP']] });
    expect(evaluateRules([adminsRule], admin, grants, now - 1)).toEqual({ met: true });
  });

  it('rule 3 per-user rules: admins and super-admins only; a viewer is not asked for a second factor', () => {
    expect(evaluateRules([adminsRule], viewer, [{ factor: 'OTT', issuedAt: now }], now)).toEqual({ met: true });
    expect(evaluateRules([adminsRule], root, [{ factor: 'OTT', issuedAt: now }], now)).toMatchObject({ met: false });
    const byEmail: FactorRule = { name: 'bob', appliesTo: { users: ['bob@acme.test'] }, anyOf: [[{ factor: 'WEBAUTHN' }]] };
    expect(evaluateRules([byEmail], viewer, [{ factor: 'OTT', issuedAt: now }], now)).toMatchObject({ met: false, rule: 'bob' });
  });

  it('every applicable rule must be met', () => {
    const everyone: FactorRule = {
      name: 'fresh',
      appliesTo: { everyone: true },
      anyOf: [[{ factor: 'OTT', maxAgeSeconds: 60 }], [{ factor: 'WEBAUTHN' }]],
    };
    expect(
      evaluateRules(
        [everyone, adminsRule],
        admin,
        [
          { factor: 'OTT', issuedAt: now },
          { factor: 'TOTP', issuedAt: now },
        ],
        now,
      ),
    ).toEqual({ met: true });
    expect(
      evaluateRules(
        [everyone, adminsRule],
        admin,
        [
          { factor: 'OTT', issuedAt: now - 61 },
          { factor: 'TOTP', issuedAt: now },
        ],
        now,
      ),
    ).toMatchObject({ met: false, rule: 'fresh' });
  });
});

describe('a remembered browser (spec Multi-factor rules 5)', () => {
  const now = 10_000;

  it('spares the second step of an alternative whose first factor is held, never the first factor itself', () => {
    const ott = [{ factor: 'OTT' as const, issuedAt: now }];
    expect(evaluateRules([adminsRule], admin, ott, now, remembered)).toEqual({ met: true });
    expect(evaluateRules([adminsRule], admin, ott, now, {})).toMatchObject({ met: false });
    // Nothing held at all: the device stands in for nothing.
    expect(evaluateRules([adminsRule], admin, [], now, remembered)).toMatchObject({ met: false });
    // A rule of first factors only (a passkey) is not spared by it.
    const passkeyOnly: FactorRule = { name: 'passkey', appliesTo: { everyone: true }, anyOf: [[{ factor: 'WEBAUTHN' }]] };
    expect(evaluateRules([passkeyOnly], admin, ott, now, remembered)).toMatchObject({
      met: false,
      stillNeeded: [['WEBAUTHN']],
    });
    // OTT + password held as password alone: the link is still needed.
    const ottPassword: FactorRule = { name: 'op', appliesTo: { everyone: true }, anyOf: [[{ factor: 'OTT' }, { factor: 'PASSWORD' }]] };
    expect(evaluateRules([ottPassword], admin, [{ factor: 'PASSWORD', issuedAt: now }], now, remembered)).toMatchObject({
      met: false,
      stillNeeded: [['OTT']],
    });
  });
});

describe('start-up refuses rules that enforce nothing (spec Multi-factor rules 4)', () => {
  const all = new Set(['PASSWORD', 'OTT', 'WEBAUTHN', 'TOTP', 'RECOVERY_CODE'] as const);

  it('a factor nothing contributes (X.509 listener off, no upstream provider) stops start-up', () => {
    expect(() => validateRules([adminsRule], all)).not.toThrow();
    const x509: FactorRule = { name: 'certs', appliesTo: { everyone: true }, anyOf: [[{ factor: 'X509' }]] };
    expect(() => validateRules([x509], all)).toThrow(FactorRuleError);
    expect(() => validateRules([x509], all)).toThrow(/requires X509, which nothing on this server contributes/);
    const upstream: FactorRule = {
      name: 'sso',
      appliesTo: { everyone: true },
      anyOf: [[{ factor: 'WEBAUTHN' }], [{ factor: 'AUTHORIZATION_CODE' }]],
    };
    expect(() => validateRules([upstream], all)).toThrow(/AUTHORIZATION_CODE/);
  });

  it.each([
    [{ name: '', appliesTo: { everyone: true }, anyOf: [[{ factor: 'OTT' }]] }, /needs a name/],
    [{ name: 'x', appliesTo: {}, anyOf: [[{ factor: 'OTT' }]] }, /applies to nobody/],
    [{ name: 'x', appliesTo: { roles: [] }, anyOf: [[{ factor: 'OTT' }]] }, /applies to nobody/],
    [{ name: 'x', appliesTo: { everyone: true }, anyOf: [] }, /no alternatives/],
    [{ name: 'x', appliesTo: { everyone: true }, anyOf: [[]] }, /empty alternative/],
    [{ name: 'x', appliesTo: { everyone: true }, anyOf: [[{ factor: 'SMS' }]] }, /unknown factor "SMS"/],
    [{ name: 'x', appliesTo: { everyone: true }, anyOf: [[{ factor: 'OTT', maxAgeSeconds: 0 }]] }, /positive integer/],
    [{ name: 'x', appliesTo: { everyone: true }, anyOf: [[{ factor: 'OTT', maxAgeSeconds: 1.5 }]] }, /positive integer/],
  ])('refuses %j', (rule, message) => {
    expect(() => validateRules([rule as FactorRule], all)).toThrow(message);
  });

  it('refuses two rules of one name', () => {
    expect(() => validateRules([adminsRule, adminsRule], all)).toThrow(/defined twice/);
  });
});
