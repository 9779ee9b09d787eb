// Connection
export { createDatabase } from './client.js';
export type { Database, DatabaseHandle, DatabaseOptions } from './client.js';

// Migrations
export { runMigrations } from './migrate.js';

// Schema
export * as schema from './schema.js';
export { users } from './schema.js';
export type { NewUserRow, UserRow } from './schema.js';
