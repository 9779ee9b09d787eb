import type { SignInFactor } from '../web/factor-module.js';

/** A password (`pwd`), unless PASSWORDS is off: only ever a later step of a sign-in. */
export const passwordFactor: SignInFactor = {
  authority: 'PASSWORD',
  amr: 'pwd',
  label: 'your password',
  secondStep: true,
  offeredWhen: (settings) => settings.passwords,
  web: async () => (await import('./web.js')).createPasswordWeb,
};
