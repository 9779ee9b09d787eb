export { hashToken, isRandomTokenShaped, randomToken } from './random-token.js';
