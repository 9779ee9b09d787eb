/**
 * A factor authority: what a completed authentication step contributes (spec Resources "Factor authorities"), as
 * rules, acr levels and security events spell it. Which authorities exist is the factor registry's to say.
 */
export type Factor = string;

/** What the sign-in's judgement and its pages know of a factor: its authority, how it is reported and named. */
export interface FactorIdentity {
  authority: Factor;
  /** its RFC 8176 method, reported in `amr` */
  amr: string;
  /** how the pages name it, to finish "signed in with ...": "a passkey" */
  label: string;
  /**
   * a later step of a sign-in, which a remembered browser may spare (spec Multi-factor rules 5); never the factor
   * that identifies the person. @default false
   */
  secondStep?: boolean;
}

/** A factor as it sits on a signed-in caller: which one, and when it was proven (epoch seconds). */
export interface FactorGrant {
  factor: Factor;
  issuedAt: number;
}

/** One factor a rule asks for, optionally only while younger than `maxAgeSeconds` (re-authenticate after). */
export interface FactorRequirement {
  factor: Factor;
  /** how long the factor counts after it was proven. @default no limit (for the session's lifetime) */
  maxAgeSeconds?: number;
}

/** Who a rule applies to. Several keys widen it (any of them matches). */
export interface RuleAudience {
  /** every account */
  everyone?: boolean;
  /** accounts holding one of these roles in any organization */
  roles?: ('OWNER' | 'ADMIN' | 'EDITOR' | 'VIEWER')[];
  /** platform super-admins */
  superAdmins?: boolean;
  /** these accounts, by e-mail address (lower case) */
  users?: string[];
}

/** A multi-factor rule (spec Multi-factor rules 1-3): one of the alternatives, each a set of factors. */
export interface FactorRule {
  name: string;
  appliesTo: RuleAudience;
  /** alternatives: meeting any one of them meets the rule; each alternative needs all its factors */
  anyOf: FactorRequirement[][];
}

/** The facts about an account a rule's audience is decided on (looked up at decision time, never cached). */
export interface AccountFacts {
  email: string;
  roles: readonly string[];
  superAdmin: boolean;
}

/** An assurance level this provider reports as `acr`, with what it takes. Ordered weakest first. */
export interface AcrLevel {
  value: string;
  /** any of these factor sets reaches the level */
  anyOf: Factor[][];
}
