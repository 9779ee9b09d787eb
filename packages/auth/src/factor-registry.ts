import { oneTimeTokenFactor } from './one-time-token/factor.js';
import { passkeyFactor } from './passkeys/factor.js';
import { passwordFactor } from './password/factor.js';
import { recoveryCodeFactor } from './recovery-codes/factor.js';
import { totpFactor } from './totp/factor.js';
import { upstreamFactor } from './upstream/factor.js';
import type { SignInFactor } from './web/factor-module.js';
import { clientCertificateFactor } from './x509/factor.js';

/**
 * The sign-in factors this server knows, one line each. Configuration checks rules against them and offers the
 * ones a deployment's settings switch on; the pages list their parts in this order (on the factors page, the
 * later steps first).
 */
export const SIGN_IN_FACTORS: readonly SignInFactor[] = [
  totpFactor,
  passwordFactor,
  recoveryCodeFactor,
  oneTimeTokenFactor,
  passkeyFactor,
  upstreamFactor,
  clientCertificateFactor,
];
