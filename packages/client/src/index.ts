// The typed client of the Latchkey API: generated operations (./generated), their persisted-documents
// manifest (@latchkey/client/persisted-documents.json), and a small fetch-based client.

// Client
export { createClient } from './client.js';
export type { Client, ClientOptions, ExecutionResult, Operation, PersistedMode } from './client.js';
export { createDpopSigner } from './dpop.js';
export type { DpopSigner, DpopSignerOptions } from './dpop.js';

// Errors
export { errorFor, ForbiddenError, GraphQLRequestError, NetworkError, StepUpRequiredError, UnauthenticatedError } from './errors.js';
export type { GraphQLErrorShape } from './errors.js';

// Generated operations and their types
export * from './generated/graphql.js';
