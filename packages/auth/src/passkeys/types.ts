import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';

/**
 * The relying party (spec "Passkeys" 1, 2): its ID (the registrable domain, e.g. `example.com`, or
 * `localhost` in development), the name authenticators show, and every origin a ceremony may run from,
 * exactly as the browser reports it (scheme, host and any port: `https://login.example.com`,
 * `http://localhost:3000`).
 */
export interface PasskeyRelyingParty {
  id: string;
  name: string;
  origins: string[];
}

/**
 * `binding` in every request is the value the ceremony is tied to, normally the browser session id: the
 * challenge handed out with it is only accepted back with the same value. Only its hash is stored.
 */
export interface StartPasskeyRegistrationRequest {
  /** the signed-in account that gets the passkey (users.id) */
  userId: string;
  /** shown by the authenticator to tell accounts apart, e.g. the e-mail address */
  userName: string;
  displayName?: string;
  binding: string;
  /** @default 300 (5 minutes) */
  ttlSeconds?: number;
}

export interface FinishPasskeyRegistrationRequest {
  userId: string;
  binding: string;
  /** what @simplewebauthn/browser's startRegistration() (or the page's own code) sent back */
  response: RegistrationResponseJSON;
  /** 1 to 64 characters; none: the passkey has no label until renamed */
  label?: string;
}

export interface StartPasskeyAuthenticationRequest {
  binding: string;
  /**
   * What the sign-in form had in its username field, if anything. Accepted so that a form can pass it
   * along, but deliberately unused: the options are the same for every username, existing or not (see
   * startPasskeyAuthentication).
   */
  username?: string;
  /** @default 300 (5 minutes) */
  ttlSeconds?: number;
}

export interface FinishPasskeyAuthenticationRequest {
  binding: string;
  /** what @simplewebauthn/browser's startAuthentication() (or the page's own code) sent back */
  response: AuthenticationResponseJSON;
}

export interface PasskeyAuthenticationResult {
  /** the account the passkey belongs to */
  userId: string;
  credentialId: string;
}

/** What may be shown about a stored passkey: no public key, no user handle. */
export interface PasskeySummary {
  id: string;
  label: string | null;
  /** 'singleDevice' or 'multiDevice' (a synced passkey) */
  deviceType: string;
  backedUp: boolean;
  transports: string[];
  /** the authenticator model's AAGUID; all zeros when the authenticator does not tell */
  aaguid: string;
  rpId: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}
