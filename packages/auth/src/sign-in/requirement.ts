import { acrOf } from '../factors/acr.js';
import { amrOf } from '../factors/amr.js';
import { evaluateRules, secondStepsOf } from '../factors/rules.js';
import type { AccountFacts, AcrLevel, Factor, FactorGrant, FactorIdentity, FactorRule } from '../factors/types.js';

/** The sign-in policy of a deployment: its multi-factor rules and its assurance levels (weakest first). */
export interface SignInPolicy {
  rules: readonly FactorRule[];
  acrLevels: readonly AcrLevel[];
  /** the factors this deployment verifies: a way to a level through any other factor is not offered */
  contributed: ReadonlySet<Factor>;
  /** every factor registered (the factor registry, as configured): how each is reported and named */
  factors: readonly FactorIdentity[];
}

/** Where a sign-in stands: complete (with what it reports to clients), or what is still needed. */
export type SignInStanding =
  | { complete: true; amr: string[]; acr: string | undefined }
  | { complete: false; reason: 'rule' | 'acr'; stillNeeded: Factor[][] };

/**
 * Judges the factors of a sign-in against the rules that apply to the account and, when an application asked
 * for one (`acr_values`, RFC 9470 step-up), the assurance level: one of the requested levels, or a stronger
 * one, must be reached. `stillNeeded` lists the alternatives, each with the factors it still lacks.
 */
export function judgeSignIn(
  policy: SignInPolicy,
  account: AccountFacts,
  factors: readonly FactorGrant[],
  request: { acrValues?: readonly string[]; now?: number; rememberedDevice?: boolean } = {},
): SignInStanding {
  const now = request.now ?? Math.floor(Date.now() / 1000);
  // A remembered browser may spare second steps of the rules; it adds nothing to amr or acr and never counts
  // towards a requested acr (a step-up always asks for the factors themselves).
  const spares = request.rememberedDevice === true ? secondStepsOf(policy.factors) : undefined;
  const rules = evaluateRules(policy.rules, account, factors, now, { spares });
  if (!rules.met) return { complete: false, reason: 'rule', stillNeeded: rules.stillNeeded };
  const acr = acrOf(factors, policy.acrLevels);
  const requested = (request.acrValues ?? []).filter((value) => policy.acrLevels.some((level) => level.value === value));
  if (requested.length > 0) {
    const rank = (value: string | undefined) => policy.acrLevels.findIndex((level) => level.value === value);
    const weakestRequested = Math.min(...requested.map(rank));
    if (rank(acr) < weakestRequested) {
      const held = new Set(factors.map((grant) => grant.factor));
      const sets = policy.acrLevels
        .slice(weakestRequested)
        .flatMap((level) => level.anyOf)
        .filter((set) => set.every((factor) => policy.contributed.has(factor)));
      const stillNeeded = sets.map((set) => set.filter((factor) => !held.has(factor))).sort((a, b) => a.length - b.length);
      return { complete: false, reason: 'acr', stillNeeded: minimalAlternatives(stillNeeded) };
    }
  }
  return { complete: true, amr: amrOf(factors, policy.factors), acr };
}

/**
 * The alternatives worth offering, fewest factors first: each once, and none that asks for more than another
 * already does (with OTT held, "password and TOTP" adds nothing to "TOTP").
 */
function minimalAlternatives(sets: Factor[][]): Factor[][] {
  const kept: Factor[][] = [];
  for (const set of sets) {
    if (kept.some((smaller) => smaller.every((factor) => set.includes(factor)))) continue;
    kept.push(set);
  }
  return kept;
}
