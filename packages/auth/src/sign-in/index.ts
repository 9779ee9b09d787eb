export { accountFactsOf } from './account-facts.js';
export {
  purgeExpiredSignInProgress,
  PROGRESS_TTL_SECONDS,
  readSignInProgress,
  recordFactor,
  saveSignInProgress,
  takeSignInProgress,
  withGrant,
} from './progress.js';
export type { SignInProgress } from './progress.js';
export { purgeExpiredSessionFactors, readSessionFactors, saveSessionFactors } from './session-factors.js';
export { judgeSignIn } from './requirement.js';
export type { SignInPolicy, SignInStanding } from './requirement.js';
