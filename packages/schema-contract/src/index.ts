// The schema as a contract with its clients: what an operation uses of it, which of that is deprecated, and what a
// change to it means for the operations clients are known to send.

// What operations use
export { operationUsage, splitOperations } from './coordinates.js';
export type { Deprecation, OperationUsage } from './coordinates.js';
export { deprecatedCoordinates } from './deprecated-coordinates.js';

// Schemas and documents from files
export { clientView, located, printClientSchema, schemaOfSources, SOURCE_ERRORS, SourceError } from './schema-source.js';
export type { SourceFile } from './schema-source.js';
export { operationsOf } from './known-operation.js';
export type { KnownOperation, OperationOrigin } from './known-operation.js';

// Comparing a schema with its base
export { affectedUse, compareSchemas } from './compare-schemas.js';
export type { AffectedUse, ChangeLevel, ClassifiedChange, ContractReport, RecordedUse } from './compare-schemas.js';
