/** The verified caller of one request: a copy of the access token's claims (a snapshot, see spec Authentication 3). */
export interface Principal {
  readonly subject: string;
  readonly scope: readonly string[];
  /** RFC 8176 authentication method references */
  readonly amr: readonly string[];
  readonly acr: string | null;
  /** epoch seconds */
  readonly authTime: number | null;
  /** epoch seconds */
  readonly expiresAt: number;
  readonly issuedAt: number | null;
  readonly tokenId: string | null;
  readonly clientId: string | null;
  /** the provider session the token was issued under (`sid`); null for tokens minted outside one (the CLI) */
  readonly sessionId: string | null;
  /** the thumbprint of the key the token is bound to (`cnf.jkt`, DPoP); null for a bearer token */
  readonly boundKey: string | null;
}

/** A guest has no principal; `null` is the one value for "not signed in" inside the app. */
export type Caller = Principal | null;
