// Connection
export { createDatabase, QUERY_CHANNEL } from './client.js';
export type { Database, DatabaseHandle, DatabaseOptions } from './client.js';
export { DatabaseInUseError } from './pglite-lock.js';

// Database faults: one deadline per request, outages known and refused at once
export { currentDeadline, withDatabaseDeadline } from './faults/deadline.js';
export { DatabaseTimeoutError, DatabaseUnavailableError, isDatabaseUnavailable } from './faults/errors.js';
export { RETRY_AFTER_SECONDS, type DatabaseHealth } from './faults/health.js';
export type { PoolStats } from './faults/statement-guard.js';

// Background work (polls, purges): kept out of per-request statement counts

// Migrations
export { runMigrations } from './migrate.js';

// Notifications between instances (LISTEN/NOTIFY)
export { listen, notify } from './notify.js';

// Schema
export * as schema from './schema.js';
export {
  documentEvents,
  documentEventsPurged,
  documents,
  documentStatus,
  federatedIdentities,
  memberships,
  oidcModels,
  oneTimeTokens,
  organizations,
  passkeys,
  passwordCredentials,
  persistedOperations,
  plan,
  providerSessionFactors,
  recoveryCodes,
  rememberedDevices,
  role,
  signInProgress,
  totpCredentials,
  users,
  webauthnChallenges,
} from './schema.js';
export type {
  DocumentEventRow,
  DocumentRow,
  DocumentStatus,
  FederatedIdentityRow,
  MembershipRow,
  NewDocumentRow,
  NewOidcModelRow,
  NewPasskeyRow,
  NewUserRow,
  OidcModelRow,
  OneTimeTokenRow,
  OrganizationRow,
  PasskeyRow,
  PasswordCredentialRow,
  PersistedOperationRow,
  Plan,
  RememberedDeviceRow,
  Role,
  StoredFactorGrant,
  TotpCredentialRow,
  UserRow,
  WebAuthnChallengeRow,
} from './schema.js';

// Demo data
export { isEmpty, seedDemoData } from './seed.js';
export type { SeedResult } from './seed.js';

// Query helpers of this package's drizzle-orm instance. Packages that reach the database through
// `@latchkey/db` use these rather than importing drizzle-orm themselves: pnpm resolves drizzle-orm once per
// set of installed peers (pg, postgres, pglite), and SQL objects of two instances do not mix.
export { and, asc, count, desc, eq, gt, gte, inArray, isNotNull, isNull, lt, lte, ne, or, sql } from 'drizzle-orm';
export type { SQL } from 'drizzle-orm';
