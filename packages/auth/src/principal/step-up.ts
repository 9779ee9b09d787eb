import { CodedError } from '@latchkey/errors';
import { ACR_PHISHING_RESISTANT, ACR_TWO_FACTOR, acrSatisfies, DEFAULT_ACR_LEVELS } from '../factors/acr.js';
import type { AcrLevel } from '../factors/types.js';

/**
 * Step-up at the resource server (spec Multi-factor rules 6, RFC 9470): what an operation asks of the
 * authentication behind the caller's token. `acr`: at least this assurance level (a stronger one satisfies
 * it); `maxAge`: the sign-in (`auth_time`) at most this many seconds ago. At least one of the two is set.
 */
export interface StepUpRequirement {
  readonly acr?: string;
  readonly maxAge?: number;
}

/** The claims a requirement is judged on: a verified `SignedInCaller`, or a provider session's sign-in. */
export interface AuthenticationEvidence {
  readonly acr?: string | null;
  /** epoch seconds */
  readonly authTime?: number | null;
}

/**
 * Every credential change (adding or removing a passkey, enrolling TOTP, regenerating recovery codes, setting a
 * password, managing remembered devices): a sign-in within the last 5 minutes, whatever its level. A stolen
 * session or token cannot plant a lasting way back in without proving a factor again.
 */
export const CREDENTIAL_CHANGE_STEP_UP: StepUpRequirement = Object.freeze({ maxAge: 300 });

/** Making someone an OWNER of an organization: two factors, within the last 15 minutes. */
export const OWNER_GRANT_STEP_UP: StepUpRequirement = Object.freeze({ acr: ACR_TWO_FACTOR, maxAge: 900 });

/** Setting or lifting a legal hold (the `@stepUp` mark on `Mutation.setLegalHold`): a phishing-resistant sign-in. */
export const LEGAL_HOLD_STEP_UP: StepUpRequirement = Object.freeze({ acr: ACR_PHISHING_RESISTANT });

const nowInSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Whether the authentication meets the requirement: its `acr` is the required level or a stronger one (unknown
 * or missing values meet no level), and it happened at most `maxAge` seconds before `now` (a missing
 * `auth_time` meets no age). A guest (`null`) meets nothing.
 */
export function meetsStepUp(
  evidence: AuthenticationEvidence | null | undefined,
  requirement: StepUpRequirement,
  now: number = nowInSeconds(),
  levels: readonly AcrLevel[] = DEFAULT_ACR_LEVELS,
): boolean {
  if (!evidence) return false;
  if (requirement.acr !== undefined && !acrSatisfies(evidence.acr ?? undefined, requirement.acr, levels)) return false;
  if (requirement.maxAge !== undefined) {
    const authTime = evidence.authTime;
    if (typeof authTime !== 'number' || now - authTime > requirement.maxAge) return false;
  }
  return true;
}

/** The human-readable part of the challenge, as RFC 9470's examples word it. */
export function stepUpDescription(requirement: StepUpRequirement): string {
  return requirement.acr !== undefined ? 'A different authentication level is required' : 'More recent authentication is required';
}

/**
 * The exact `WWW-Authenticate` value of the challenge (RFC 9470 §3), e.g.
 * `Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="urn:latchkey:acr:phr", max_age=300`;
 * `acr_values` and `max_age` appear only when required.
 */
export function stepUpChallengeHeader(requirement: StepUpRequirement): string {
  let value = `Bearer error="insufficient_user_authentication", error_description="${stepUpDescription(requirement)}"`;
  if (requirement.acr !== undefined) value += `, acr_values="${requirement.acr}"`;
  if (requirement.maxAge !== undefined) value += `, max_age=${requirement.maxAge}`;
  return value;
}

/**
 * One requirement that meets both: the stronger level and the shorter age (used when one response carries
 * several challenges, since a client can answer only one).
 */
export function combineStepUp(
  a: StepUpRequirement,
  b: StepUpRequirement,
  levels: readonly AcrLevel[] = DEFAULT_ACR_LEVELS,
): StepUpRequirement {
  const rank = (value: string | undefined) => (value === undefined ? -1 : levels.findIndex((level) => level.value === value));
  const acr = rank(b.acr) > rank(a.acr) ? b.acr : (a.acr ?? b.acr);
  const maxAge = a.maxAge === undefined ? b.maxAge : b.maxAge === undefined ? a.maxAge : Math.min(a.maxAge, b.maxAge);
  return { ...(acr !== undefined ? { acr } : {}), ...(maxAge !== undefined ? { maxAge } : {}) };
}

/**
 * Checks a requirement written in configuration or SDL once, at start-up: a known level, a whole number of
 * seconds, at least one of the two. Returns it frozen, or throws naming `where`.
 */
export function validateStepUp(
  requirement: { acr?: string | null; maxAge?: number | null },
  where: string,
  levels: readonly AcrLevel[] = DEFAULT_ACR_LEVELS,
): StepUpRequirement {
  const acr = requirement.acr ?? undefined;
  const maxAge = requirement.maxAge ?? undefined;
  if (acr === undefined && maxAge === undefined) throw new Error(`${where}: a step-up needs acr, maxAge or both`);
  if (acr !== undefined && !levels.some((level) => level.value === acr)) {
    throw new Error(`${where}: acr "${acr}" is not a known level (${levels.map((level) => level.value).join(', ')})`);
  }
  if (maxAge !== undefined && (!Number.isSafeInteger(maxAge) || maxAge < 0))
    throw new Error(`${where}: maxAge must be a whole number of seconds >= 0`);
  return Object.freeze({ ...(acr !== undefined ? { acr } : {}), ...(maxAge !== undefined ? { maxAge } : {}) });
}

/**
 * Thrown by a check whose caller is allowed but signed in too weakly or too long ago. Not a denial and not an
 * HTTP error: each edge converts it (GraphQL INSUFFICIENT_USER_AUTHENTICATION with `acr_values`/`max_age`,
 * REST 401), both with the `WWW-Authenticate` challenge above.
 */
export class StepUpRequired extends CodedError<'INSUFFICIENT_USER_AUTHENTICATION'> {
  constructor(readonly requirement: StepUpRequirement) {
    super('StepUpRequired', 'INSUFFICIENT_USER_AUTHENTICATION', `${stepUpDescription(requirement)}.`);
  }
}

export function isStepUpRequired(error: unknown): error is StepUpRequired {
  return error instanceof StepUpRequired;
}

/** Throws `StepUpRequired` unless the authentication meets the requirement. */
export function requireStepUp(evidence: AuthenticationEvidence | null | undefined, requirement: StepUpRequirement, now?: number): void {
  if (!meetsStepUp(evidence, requirement, now)) throw new StepUpRequired(requirement);
}

/** The RFC 9470 parameter names, for GraphQL `extensions` and REST bodies: `{ acr_values?, max_age? }`. */
export function stepUpParameters(requirement: StepUpRequirement): { acr_values?: string; max_age?: number } {
  return {
    ...(requirement.acr !== undefined ? { acr_values: requirement.acr } : {}),
    ...(requirement.maxAge !== undefined ? { max_age: requirement.maxAge } : {}),
  };
}
