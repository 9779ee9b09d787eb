import { CodedError } from '@latchkey/errors';
import { DEFAULT_ACR_LEVELS, FactorRuleError, validateRules, type Factor, type SignInPolicy } from '@latchkey/auth/configuration';
import { z } from 'zod';

/**
 * The file AUTH_POLICY_FILE names: multi-factor rules and, optionally, the acr levels (weakest first), naming
 * the factors this server knows (`authorities`).
 */
const policyFileOf = (authorities: readonly [Factor, ...Factor[]]) => {
  const factor = z.enum(authorities);
  return z
    .object({
      acrLevels: z
        .array(z.object({ value: z.string().min(1).max(200), anyOf: z.array(z.array(factor).min(1)).min(1) }).strict())
        .min(1)
        .optional(),
      rules: z
        .array(
          z
            .object({
              name: z.string().min(1).max(100),
              appliesTo: z
                .object({
                  everyone: z.boolean().optional(),
                  roles: z.array(z.enum(['OWNER', 'ADMIN', 'EDITOR', 'VIEWER'])).optional(),
                  superAdmins: z.boolean().optional(),
                  users: z
                    .array(
                      z
                        .string()
                        .min(3)
                        .max(254)
                        .transform((email) => email.toLowerCase()),
                    )
                    .optional(),
                })
                .strict(),
              anyOf: z.array(z.array(z.object({ factor, maxAgeSeconds: z.number().int().positive().optional() }).strict()).min(1)).min(1),
            })
            .strict(),
        )
        .default([]),
    })
    .strict();
};

/** Why the sign-in policy cannot be used: start-up stops with this message. */
export class SignInPolicyError extends CodedError<'SIGN_IN_POLICY_INVALID'> {
  constructor(message: string) {
    super('SignInPolicyError', 'SIGN_IN_POLICY_INVALID', message);
  }
}

/**
 * Reads and checks the sign-in policy. `contributed` are the factors this deployment can actually verify: a
 * rule that needs any other factor stops start-up (spec Multi-factor rules 4: no rule may look enforced
 * while enforcing nothing).
 */
export function loadSignInPolicy(
  text: string | undefined,
  { factors, contributed }: Pick<SignInPolicy, 'factors' | 'contributed'>,
  source = 'AUTH_POLICY_FILE',
): SignInPolicy {
  if (text === undefined) return { rules: [], acrLevels: DEFAULT_ACR_LEVELS, contributed, factors };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new SignInPolicyError(`${source}: not valid JSON`);
  }
  const authorities = factors.map((factor) => factor.authority);
  const parsed = policyFileOf(authorities as [Factor, ...Factor[]]).safeParse(json);
  if (!parsed.success) {
    throw new SignInPolicyError(
      `${source}:\n${parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`).join('\n')}`,
    );
  }
  const acrLevels = parsed.data.acrLevels ?? DEFAULT_ACR_LEVELS;
  // The API's step-up marks (@stepUp, the OWNER rule) name the built-in levels and rank them in this order:
  // what reaches each level is configurable, the levels themselves are not.
  const values = acrLevels.map((level) => level.value);
  const builtIn = DEFAULT_ACR_LEVELS.map((level) => level.value);
  if (values.join(' ') !== builtIn.join(' ')) {
    throw new SignInPolicyError(
      `${source}: acrLevels must be, in this order, ${builtIn.join(', ')} (the API's step-up requirements name them); configure which factors reach each`,
    );
  }
  for (const level of parsed.data.acrLevels ?? []) {
    for (const set of level.anyOf) {
      const missing = set.find((factor) => !contributed.has(factor));
      if (missing)
        throw new SignInPolicyError(`${source}: acr level ${level.value} lists ${missing}, which nothing on this server contributes`);
    }
  }
  try {
    validateRules(parsed.data.rules, contributed, new Set(authorities));
  } catch (error) {
    if (error instanceof FactorRuleError) throw new SignInPolicyError(`${source}: ${error.message}`);
    throw error;
  }
  return { rules: parsed.data.rules, acrLevels, contributed, factors };
}
