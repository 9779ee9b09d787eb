export { RECOVERY_CODE_ALPHABET } from './code.js';
export { consumeRecoveryCode } from './consume.js';
export { countRecoveryCodes } from './count.js';
export { DEFAULT_RECOVERY_CODE_COUNT, generateRecoveryCodes } from './generate.js';
