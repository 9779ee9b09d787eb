export { consumeOneTimeToken, purgeExpiredOneTimeTokens } from './consume.js';
export { ONE_TIME_TOKEN_ERRORS } from './error-codes.js';
export { DEFAULT_TTL_SECONDS, generateOneTimeToken, MAX_TTL_SECONDS } from './generate.js';
export { normalizeUsername } from './token-hash.js';
export type { ConsumedOneTimeToken, GeneratedOneTimeToken, GenerateRequest } from './types.js';
