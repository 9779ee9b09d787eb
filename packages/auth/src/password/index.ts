export { PASSWORD_ERRORS, PasswordError } from './errors.js';
export type { PasswordErrorCode } from './errors.js';
export { checkPasswordPolicy, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './policy.js';
export { removePassword } from './remove.js';
export { setPassword } from './set.js';
export { hasPassword } from './status.js';
export type { SetPasswordRequest, VerifyPasswordRequest } from './types.js';
export { verifyPassword } from './verify.js';
