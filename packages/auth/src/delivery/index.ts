export { createDevOutbox, OutboxRefusedError, readOutbox } from './dev-outbox.js';
export type { DevOutboxOptions } from './dev-outbox.js';
export type { DeliveryHandler, OneTimeTokenMessage } from './types.js';
