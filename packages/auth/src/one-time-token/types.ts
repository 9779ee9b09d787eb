/** What a generate request asks for, after the generate-request hook has had its say. */
export interface GenerateRequest {
  /** the account's username: an e-mail address, compared lower-cased */
  username: string;
  /**
   * How long the token may be used. A magic link is a standing credential until it expires: keep it short.
   * @default 300 (5 minutes)
   */
  ttlSeconds?: number;
}

export interface GeneratedOneTimeToken {
  /** the token value: goes into the delivered message only, never into a response, a log line or the database */
  token: string;
  username: string;
  expiresAt: Date;
}

export interface ConsumedOneTimeToken {
  username: string;
}
