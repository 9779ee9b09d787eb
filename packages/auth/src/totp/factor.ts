import type { SignInFactor } from '../web/factor-module.js';

/** A code from an authenticator app (TOTP): a one-time code as RFC 8176 counts it (`otp`), always offered. */
export const totpFactor: SignInFactor = {
  authority: 'TOTP',
  amr: 'otp',
  label: 'a code from your authenticator app',
  secondStep: true,
  offeredWhen: () => true,
  web: async () => (await import('./web.js')).createTotpWeb,
};
