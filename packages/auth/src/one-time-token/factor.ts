import type { SignInFactor } from '../web/factor-module.js';

/** A one-time token (a link or code by e-mail): a one-time code as RFC 8176 counts it (`otp`), always offered. */
export const oneTimeTokenFactor: SignInFactor = {
  authority: 'OTT',
  amr: 'otp',
  label: 'a sign-in link or code by e-mail',
  offeredWhen: () => true,
  web: async () => (await import('./web.js')).createOneTimeTokenWeb,
};
