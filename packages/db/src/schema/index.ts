// The database schema, one module per feature; drizzle-kit reads it from here (drizzle.config.ts) and the client
// (client.ts) takes every table from this namespace.
export * from './accounts.js';
export * from './audit.js';
export * from './budgets.js';
export * from './connected-apps.js';
export * from './credentials.js';
export * from './documents.js';
export * from './dpop.js';
export * from './oidc.js';
export * from './persisted-operations.js';
export * from './sessions.js';
export * from './sign-in.js';
