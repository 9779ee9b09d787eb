export { CodedError, definedErrors } from './coded-error.js';
export type { DefinedErrorClass, MessageTable } from './coded-error.js';
