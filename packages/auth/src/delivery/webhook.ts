import { createHmac } from 'node:crypto';
import { definedErrors } from '@latchkey/errors';
import { renderMessage } from './message.js';
import type { DeliveryHandler } from './types.js';

export interface WebhookDeliveryOptions {
  /** where each message is POSTed as JSON (an SMS gateway, a chat bot, a mail API) */
  url: string;
  /** signs each body: `X-Latchkey-Signature: sha256=<hex HMAC of the body>` (at least 32 characters) */
  secret: string;
  /** @default 10000 */
  timeoutMs?: number;
}

export const WEBHOOK_ERRORS = {
  /** the webhook answered with a status outside 2xx */
  WEBHOOK_DELIVERY_FAILED: ({ status }: { status: number }) => `the delivery webhook answered ${status}`,
} as const;

/** The webhook refused a message; `status` is its HTTP status, for logs. */
export class WebhookDeliveryError extends definedErrors('WebhookDeliveryError', WEBHOOK_ERRORS) {
  constructor(readonly status: number) {
    super('WEBHOOK_DELIVERY_FAILED', { status });
  }
}

/**
 * Sends each sign-in message to a webhook (for SMS and other channels): `{ to, subject, text, magicLink,
 * expiresAt }`, signed with HMAC-SHA256 so the receiver can tell it came from us. The token itself is only in
 * the link, as in an e-mail.
 */
export function createWebhookDelivery(options: WebhookDeliveryOptions): DeliveryHandler {
  if (options.secret.length < 32) throw new RangeError('the webhook secret must have at least 32 characters');
  const timeout = options.timeoutMs ?? 10_000;
  return {
    name: 'webhook',
    async deliver(message) {
      const body = JSON.stringify({
        to: message.to,
        ...renderMessage(message),
        magicLink: message.magicLink,
        expiresAt: message.expiresAt.toISOString(),
      });
      const signature = createHmac('sha256', options.secret).update(body).digest('hex');
      const response = await fetch(options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-latchkey-signature': `sha256=${signature}` },
        body,
        signal: AbortSignal.timeout(timeout),
        redirect: 'error',
      });
      await response.arrayBuffer();
      if (!response.ok) throw new WebhookDeliveryError(response.status);
    },
  };
}
