import { verify } from 'otplib';

/** RFC 6238 defaults, which every authenticator app supports: SHA-1, 6 digits, 30-second steps. */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Accepted clock drift: one step either side of the current one (otplib epochTolerance, in seconds). */
const EPOCH_TOLERANCE_SECONDS = TOTP_PERIOD_SECONDS;

/** Exactly six ASCII digits; anything else is refused before the database is asked. */
export function isTotpCodeShaped(code: unknown): code is string {
  return typeof code === 'string' && /^[0-9]{6}$/.test(code);
}

export type StepMatch = { readonly outcome: 'valid'; readonly step: number } | { readonly outcome: 'invalid' | 'replayed' };

/**
 * Checks `code` against the steps now-1, now, now+1. With `lastUsedStep`, steps up to and including it are
 * skipped (otplib's afterTimeStep); a code that only matches such a step is reported as replayed.
 */
export async function matchStep(secret: string, code: string, now: Date, lastUsedStep: number | null): Promise<StepMatch> {
  const epoch = Math.floor(now.getTime() / 1000);
  const maxStep = Math.floor((epoch + EPOCH_TOLERANCE_SECONDS) / TOTP_PERIOD_SECONDS);
  const options = {
    secret,
    token: code,
    epoch,
    period: TOTP_PERIOD_SECONDS,
    digits: TOTP_DIGITS,
    epochTolerance: EPOCH_TOLERANCE_SECONDS,
  } as const;
  // otplib throws when afterTimeStep lies beyond the window; at maxStep it already rules every step out.
  const afterTimeStep = lastUsedStep === null ? undefined : Math.min(lastUsedStep, maxStep);
  const result = await verify(afterTimeStep === undefined ? options : { ...options, afterTimeStep });
  if (result.valid) {
    const step = 'timeStep' in result ? result.timeStep : Math.floor(epoch / TOTP_PERIOD_SECONDS) + result.delta;
    return { outcome: 'valid', step };
  }
  if (afterTimeStep === undefined) return { outcome: 'invalid' };
  // Only to tell a replay apart in the logs: does the code match a step that has been used already?
  const again = await verify(options);
  return { outcome: again.valid ? 'replayed' : 'invalid' };
}
