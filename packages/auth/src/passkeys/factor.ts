import type { SignInFactor } from '../web/factor-module.js';

/** A passkey (WebAuthn, when RP_ID is usable): a software key as RFC 8176 counts it (`swk`). */
export const passkeyFactor: SignInFactor = {
  authority: 'WEBAUTHN',
  amr: 'swk',
  label: 'a passkey',
  offeredWhen: (settings) => settings.passkeys,
  web: async () => (await import('./web.js')).createPasskeyWeb,
};
