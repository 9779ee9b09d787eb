import { definedErrors } from '@latchkey/errors';
import type { AccountFacts, Factor, FactorGrant, FactorIdentity, FactorRequirement, FactorRule } from './types.js';

/** The outcome of the rules for one account: met, or the alternatives with what each still needs. */
export type RuleOutcome = { met: true } | { met: false; rule: string; stillNeeded: Factor[][] };

export function appliesTo(rule: FactorRule, account: AccountFacts): boolean {
  const audience = rule.appliesTo;
  return (
    audience.everyone === true ||
    (audience.superAdmins === true && account.superAdmin) ||
    (audience.roles ?? []).some((role) => account.roles.includes(role)) ||
    (audience.users ?? []).includes(account.email.toLowerCase())
  );
}

/**
 * The factors a remembered browser may stand in for (spec Multi-factor rules 5): second steps only. It never
 * stands in for the factor that identifies the person (a link, a passkey, a certificate, an upstream sign-in).
 */
export const secondStepsOf = (factors: readonly FactorIdentity[]): ReadonlySet<Factor> =>
  new Set(factors.filter((factor) => factor.secondStep === true).map((factor) => factor.authority));

/** Whether a requirement is met by the grants at `now` (a factor past its validity no longer counts). */
function holds(requirement: FactorRequirement, grants: readonly FactorGrant[], now: number): boolean {
  return grants.some(
    (grant) =>
      grant.factor === requirement.factor && (requirement.maxAgeSeconds === undefined || now - grant.issuedAt <= requirement.maxAgeSeconds),
  );
}

/**
 * Checks every rule that applies to the account (spec Multi-factor rules 1-3). All applicable rules must be
 * met; for the first that is not, says what each of its alternatives still needs, fewest first. On a
 * remembered browser, an alternative of which at least one factor is held no longer needs the factors it
 * `spares` (its second steps, secondStepsOf); nothing else changes.
 */
export function evaluateRules(
  rules: readonly FactorRule[],
  account: AccountFacts,
  grants: readonly FactorGrant[],
  now = Math.floor(Date.now() / 1000),
  options: { spares?: ReadonlySet<Factor> } = {},
): RuleOutcome {
  for (const rule of rules) {
    if (!appliesTo(rule, account)) continue;
    const missing = rule.anyOf.map((alternative) => {
      const lacking = alternative.filter((requirement) => !holds(requirement, grants, now)).map((requirement) => requirement.factor);
      const anyHeld = lacking.length < alternative.length;
      const spared = options.spares;
      return spared && anyHeld ? lacking.filter((factor) => !spared.has(factor)) : lacking;
    });
    if (missing.some((factors) => factors.length === 0)) continue;
    return { met: false, rule: rule.name, stillNeeded: [...missing].sort((a, b) => a.length - b.length) };
  }
  return { met: true };
}

type InRule = { rule: string };
type InRequirement = InRule & { factor: string };

/** Why a rule set was refused; each message names the rule (and the factor) so the operator can find it. */
export const FACTOR_RULE_ERRORS = {
  FACTOR_RULE_UNNAMED: 'every multi-factor rule needs a name',
  FACTOR_RULE_DUPLICATE: ({ rule }: InRule) => `multi-factor rule "${rule}" is defined twice`,
  FACTOR_RULE_NO_AUDIENCE: ({ rule }: InRule) =>
    `multi-factor rule "${rule}" applies to nobody: set appliesTo.everyone, roles, superAdmins or users`,
  FACTOR_RULE_NO_ALTERNATIVES: ({ rule }: InRule) => `multi-factor rule "${rule}" has no alternatives (anyOf)`,
  FACTOR_RULE_EMPTY_ALTERNATIVE: ({ rule }: InRule) => `multi-factor rule "${rule}" has an empty alternative`,
  FACTOR_RULE_UNKNOWN_FACTOR: ({ rule, factor }: InRequirement) => `multi-factor rule "${rule}" names an unknown factor "${factor}"`,
  FACTOR_RULE_FACTOR_NOT_CONTRIBUTED: ({ rule, factor }: InRequirement) =>
    `multi-factor rule "${rule}" requires ${factor}, which nothing on this server contributes: enable it or change the rule`,
  FACTOR_RULE_INVALID_MAX_AGE: ({ rule, factor }: InRequirement) =>
    `multi-factor rule "${rule}": maxAgeSeconds of ${factor} must be a positive integer`,
} as const;

export type FactorRuleErrorCode = keyof typeof FACTOR_RULE_ERRORS;

/** A rule set that cannot be enforced as written: refused at start-up (spec Multi-factor rules 4). */
export class FactorRuleError extends definedErrors('FactorRuleError', FACTOR_RULE_ERRORS) {}

/**
 * Refuses, at start-up, rules that would look enforced while enforcing nothing: a factor nothing contributes
 * on this deployment (X.509 listener off, no upstream provider), unknown factors, empty alternatives,
 * audiences that name nobody, nonsensical durations. `known` are the factors registered at all.
 */
export function validateRules(rules: readonly FactorRule[], contributed: ReadonlySet<Factor>, known: ReadonlySet<Factor>): void {
  const names = new Set<string>();
  for (const rule of rules) {
    if (typeof rule.name !== 'string' || !rule.name) throw new FactorRuleError('FACTOR_RULE_UNNAMED');
    const named = { rule: rule.name };
    if (names.has(rule.name)) throw new FactorRuleError('FACTOR_RULE_DUPLICATE', named);
    names.add(rule.name);
    const audience = rule.appliesTo ?? {};
    if (!audience.everyone && !audience.superAdmins && !audience.roles?.length && !audience.users?.length) {
      throw new FactorRuleError('FACTOR_RULE_NO_AUDIENCE', named);
    }
    if (!Array.isArray(rule.anyOf) || rule.anyOf.length === 0) throw new FactorRuleError('FACTOR_RULE_NO_ALTERNATIVES', named);
    for (const alternative of rule.anyOf) {
      if (!Array.isArray(alternative) || alternative.length === 0) throw new FactorRuleError('FACTOR_RULE_EMPTY_ALTERNATIVE', named);
      for (const requirement of alternative) {
        const factor = { ...named, factor: String(requirement.factor) };
        if (!known.has(requirement.factor)) throw new FactorRuleError('FACTOR_RULE_UNKNOWN_FACTOR', factor);
        if (!contributed.has(requirement.factor)) throw new FactorRuleError('FACTOR_RULE_FACTOR_NOT_CONTRIBUTED', factor);
        const age = requirement.maxAgeSeconds;
        if (age !== undefined && (!Number.isInteger(age) || age < 1)) throw new FactorRuleError('FACTOR_RULE_INVALID_MAX_AGE', factor);
      }
    }
  }
}
