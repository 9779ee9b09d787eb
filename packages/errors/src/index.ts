// The one error model of the workspace: a base class with a stable `code`, and families of codes kept as data.
export { CodedError, definedErrors, isCodedError } from './coded-error.js';
export type { DefinedErrorClass, MessageTable } from './coded-error.js';
