// The schema as a contract with its clients: what an operation uses of it (and which of that is deprecated).

export { documentUsage, operationUsage } from './coordinates.js';
export type { Deprecation, OperationUsage } from './coordinates.js';
