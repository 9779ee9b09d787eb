export { createDevOutbox, OutboxRefusedError, readOutbox } from './dev-outbox.js';
export { renderMessage } from './message.js';
export { createSmtpDelivery } from './smtp.js';
export type { SmtpDeliveryOptions } from './smtp.js';
export type { DevOutboxOptions } from './dev-outbox.js';
export type { DeliveryHandler, OneTimeTokenMessage } from './types.js';
