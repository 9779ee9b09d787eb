export { createDevOutbox, DEV_OUTBOX_ERRORS, OutboxRefusedError, readOutbox } from './dev-outbox.js';
export { renderMessage } from './message.js';
export { createSmtpDelivery } from './smtp.js';
export type { SmtpDeliveryOptions } from './smtp.js';
export { createWebhookDelivery, WEBHOOK_ERRORS, WebhookDeliveryError } from './webhook.js';
export type { WebhookDeliveryOptions } from './webhook.js';
export type { DevOutboxOptions } from './dev-outbox.js';
export type { DeliveryHandler, OneTimeTokenMessage } from './types.js';
