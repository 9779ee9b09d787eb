// Connection
export { createDatabase, QUERY_CHANNEL } from './client.js';
export type { Database, DatabaseHandle, DatabaseOptions } from './client.js';

// Migrations
export { runMigrations } from './migrate.js';

// Schema
export * as schema from './schema.js';
export { documents, documentStatus, memberships, oneTimeTokens, organizations, plan, role, users } from './schema.js';
export type {
  DocumentRow,
  DocumentStatus,
  MembershipRow,
  NewDocumentRow,
  NewUserRow,
  OneTimeTokenRow,
  OrganizationRow,
  Plan,
  Role,
  UserRow,
} from './schema.js';

// Demo data
export { isEmpty, seedDemoData } from './seed.js';
export type { SeedResult } from './seed.js';
