import type { SignInFactor } from '../web/factor-module.js';

/** A recovery code: a one-time code as RFC 8176 counts it (`otp`), always offered. */
export const recoveryCodeFactor: SignInFactor = {
  authority: 'RECOVERY_CODE',
  amr: 'otp',
  label: 'a recovery code',
  secondStep: true,
  offeredWhen: () => true,
  web: async () => (await import('./web.js')).createRecoveryCodeWeb,
};
