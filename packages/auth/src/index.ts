// One-time-token login (spec "One-time token login")
export {
  consumeOneTimeToken,
  DEFAULT_TTL_SECONDS,
  generateOneTimeToken,
  MAX_TTL_SECONDS,
  normalizeUsername,
  ONE_TIME_TOKEN_ERRORS,
  purgeExpiredOneTimeTokens,
} from './one-time-token/index.js';
export type { ConsumedOneTimeToken, GeneratedOneTimeToken, GenerateRequest } from './one-time-token/index.js';

// Delivery
export { createDevOutbox, OutboxRefusedError, readOutbox } from './delivery/index.js';
export type { DeliveryHandler, DevOutboxOptions, OneTimeTokenMessage } from './delivery/index.js';
