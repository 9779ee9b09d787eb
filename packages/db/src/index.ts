// Connection
export { createDatabase, QUERY_CHANNEL } from './client.js';
export type { Database, DatabaseHandle, DatabaseOptions } from './client.js';
export { DatabaseInUseError } from './pglite-lock.js';

// Database faults: one deadline per request, outages known and refused at once
export { currentDeadline, withDatabaseDeadline } from './faults/deadline.js';
export { DatabaseTimeoutError, DatabaseUnavailableError, isDatabaseUnavailable } from './faults/errors.js';
export { RETRY_AFTER_SECONDS, type DatabaseHealth } from './faults/health.js';
export type { PoolStats } from './faults/statement-guard.js';

// Migrations
export { runMigrations } from './migrate.js';

// Notifications between instances (LISTEN/NOTIFY)
export { listen, notify } from './notify.js';

// Schema
export * as schema from './schema/index.js';
export {
  apiBudgets,
  auditAnchors,
  auditEvents,
  connectedApps,
  documentEvents,
  documentEventsPurged,
  documents,
  documentStatus,
  deprecatedUses,
  dpopProofUses,
  endedSessions,
  federatedIdentities,
  memberships,
  oidcModels,
  oneTimeTokens,
  organizations,
  passkeys,
  passwordCredentials,
  persistedAppDocuments,
  persistedAppVersions,
  persistedOperations,
  plan,
  providerSessionFactors,
  recoveryCodes,
  rememberedDevices,
  role,
  sessionActivity,
  signInProgress,
  totpCredentials,
  users,
  webauthnChallenges,
} from './schema/index.js';
export type {
  AuditAnchorRow,
  AuditEventRow,
  DeprecatedUseRow,
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
  SessionActivityRow,
  OneTimeTokenRow,
  OrganizationRow,
  PasskeyRow,
  PasswordCredentialRow,
  PersistedAppVersionRow,
  PersistedOperationRow,
  Plan,
  RememberedDeviceRow,
  Role,
  StoredFactorGrant,
  TotpCredentialRow,
  UserRow,
  WebAuthnChallengeRow,
} from './schema/index.js';

// Repositories: the application's queries, one module per feature. Each function takes the database (a request's
// view, a transaction, or `DatabaseHandle.background`) and typed arguments, and answers typed rows; what to ask for
// (and whether the caller may) is decided by the caller.
export {
  deleteDocumentById,
  findDocumentById,
  findDocumentByTitle,
  findDocumentWithOrganization,
  insertDocument,
  lockDocumentWithOrganization,
  updateDocumentById,
} from './repositories/documents.js';
export type { DocumentWithOrganizationRow } from './repositories/documents.js';
export { listVisibleDocuments, listVisibleDocumentsTogether, listVisibleDocumentsWithCaller } from './repositories/document-lists.js';
export type { DocumentListQuery, DocumentVisibility, ListedDocument } from './repositories/document-lists.js';
export {
  insertDocumentEvent,
  nextDocumentEventSeq,
  purgeDocumentEvents,
  readDocumentEventBatch,
} from './repositories/document-events.js';
export type { DocumentEventBatchRow } from './repositories/document-events.js';
export {
  countOwners,
  findMemberRole,
  listMembershipsOfUser,
  listMembershipsOfUsers,
  listOrganizationIdsOfUsers,
  setMemberRole,
} from './repositories/memberships.js';
export type { MemberKey, MembershipWithOrganizationRow } from './repositories/memberships.js';
export {
  findOrganizationBySlug,
  listOrganizationsByIds,
  listOrganizationsBySlugs,
  listPlansOfUser,
  lockOrganizationBySlug,
  setOrganizationPlan,
} from './repositories/organizations.js';
export { deleteFullBudgets, giveBudget, peekBudget, reserveBudget, resetBudget } from './repositories/budgets.js';
export type { BudgetReservation, StoredBucketSize } from './repositories/budgets.js';
export { listDeprecatedUses, recordDeprecatedUses } from './repositories/deprecated-uses.js';
export type { DeprecatedUse } from './repositories/deprecated-uses.js';
export { listPasskeysOfUser } from './repositories/passkeys.js';
export { purgeDpopProofUses, recordDpopProofUse } from './repositories/dpop-proofs.js';
export {
  endAccountSessions,
  listAccountSessions,
  listEndedSessions,
  listSignedOutSession,
  purgeSessionRecords,
  recordSessionSignIn,
  recordSessionUse,
} from './repositories/sessions.js';
export type { SessionSelection, StoredSession } from './repositories/sessions.js';
export {
  findConnectedAppGrant,
  listConnectedApps,
  parseRevokedAppKey,
  recordConnectedApp,
  recordConnectedAppUse,
  revokeConnectedApp,
  revokedAppKey,
} from './repositories/connected-apps.js';
export {
  addUserIfAbsent,
  findAnyUserIdByEmail,
  findUserById,
  findUserWithRoles,
  listUsersWithOrganizationIds,
} from './repositories/users.js';
export type { UserWithRoles } from './repositories/users.js';

// Demo data
export {
  auditChainHead,
  insertAuditEvents,
  lastAuditEventBefore,
  latestAuditAnchor,
  listAuditEvents,
  listAuditEventsOf,
  lockAuditChain,
  purgeAuditEventsThrough,
} from './repositories/audit.js';
export { isEmpty, seedDemoData } from './seed.js';
export { BENCH_DATA, BULK_STATEMENT_TIMEOUT_MS, seedBenchData } from './seed-bench.js';
export type { BenchSeedCounts, BenchSeedResult } from './seed-bench.js';
export type { SeedResult } from './seed.js';

// Query helpers of this package's drizzle-orm instance. Packages that reach the database through
// `@latchkey/db` use these rather than importing drizzle-orm themselves: pnpm resolves drizzle-orm once per
// set of installed peers (pg, postgres, pglite), and SQL objects of two instances do not mix.
export { and, asc, count, desc, eq, gt, gte, inArray, isNotNull, isNull, lt, lte, ne, or, sql } from 'drizzle-orm';
export type { SQL } from 'drizzle-orm';
