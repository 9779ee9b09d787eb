export { consumeOneTimeToken, consumeOneTimeTokenInBrowser, purgeExpiredOneTimeTokens } from './consume.js';
export { ONE_TIME_TOKEN_ERRORS } from './error-codes.js';
export { DEFAULT_TTL_SECONDS, generateOneTimeToken, generateOneTimeTokenWithCode, MAX_TTL_SECONDS } from './generate.js';
export {
  consumeShortCode,
  isCodeBindingShaped,
  isShortCodeShaped,
  newCodeBinding,
  revokeShortCodes,
  SHORT_CODE_ATTEMPTS,
  SHORT_CODE_DIGITS,
} from './short-code.js';
export { normalizeUsername } from './username.js';
export type { ConsumedOneTimeToken, GeneratedOneTimeToken, GenerateRequest } from './types.js';
