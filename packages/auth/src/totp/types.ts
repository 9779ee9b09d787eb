export interface StartTotpEnrolmentRequest {
  userId: string;
  /** shown in the authenticator app under the issuer, typically the e-mail address */
  accountName: string;
  /** the service's name in the authenticator app, e.g. 'Latchkey' */
  issuer: string;
}

/**
 * What the enrolment page shows, once. `secret` (base32, for manual entry) and `otpauthUri` (which contains
 * it) are credentials: show them once, never log or store them anywhere else.
 */
export interface TotpEnrolment {
  secret: string;
  otpauthUri: string;
  /** an <svg> QR code of otpauthUri, to be inlined in the page */
  qrSvg: string;
}

export interface TotpCodeRequest {
  userId: string;
  /** six digits, as typed */
  code: string;
  /** the clock; defaults to the current time */
  now?: Date;
}
