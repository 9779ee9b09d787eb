import type { SignInFactor } from '../web/factor-module.js';

/** An X.509 client certificate on the TLS listener: a hardware-bound key as RFC 8176 counts it (`hwk`). */
export const clientCertificateFactor: SignInFactor = {
  authority: 'X509',
  amr: 'hwk',
  label: 'a client certificate',
  offeredWhen: (settings) => settings.clientCertificates,
  web: async () => (await import('./web.js')).createClientCertificateWeb,
};
