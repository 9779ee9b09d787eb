import type { IncomingMessage, ServerResponse } from 'node:http';

/** The message a one-time token travels in. */
export interface OneTimeTokenMessage {
  /** the recipient (the normalised username, an e-mail address) */
  to: string;
  /** `{PUBLIC_URL}/login/ott?token=...` */
  magicLink: string;
  token: string;
  /**
   * the short code of the same token (6 digits), if one was made: it works only in the browser that asked for
   * it. Like the token, it belongs in the message only, never in a response or a log line.
   */
  code?: string;
  expiresAt: Date;
}

/**
 * Delivery is the application's part (spec One-time token login 1): it receives the request, the response and
 * the token. It must not write the token into the response; the caller answers the client identically
 * whether or not anything was delivered, and does not wait for delivery to finish.
 */
export interface DeliveryHandler {
  readonly name: string;
  deliver(message: OneTimeTokenMessage, exchange: { request?: IncomingMessage; response?: ServerResponse }): Promise<void>;
}
