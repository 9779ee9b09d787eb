// Persisted operations: automatic persisted queries (APQ) and trusted documents (allowlist).

// The Yoga plugin, and the transport-independent rules it applies
export { usePersistedOperations } from './use-persisted-operations.js';
export type { PersistedOperationsOptions } from './use-persisted-operations.js';
export { createPersistedRequestResolver } from './resolve-request.js';
export { persistedOperationOf, runsPersistedOperation } from './running-operation.js';
export type {
  PersistedMode,
  PersistedRequest,
  PersistedRequestParams,
  PersistedRequestResolver,
  PersistedResolution,
  RegistrationDecision,
} from './resolve-request.js';

// Stores
export { createPersistedStore, RECHECK_SECONDS } from './store/persisted-store.js';
export type { PersistedStoreOptions } from './store/persisted-store.js';
export {
  APP_VERSION_ERRORS,
  AppVersionError,
  listActiveAppDocuments,
  listAppNames,
  listAppVersions,
  retireAppVersion,
  UNNAMED_APP,
  UNNAMED_VERSION,
} from './store/app-versions.js';
export type { AppDocument, AppVersion, AppVersionSummary } from './store/app-versions.js';
export { listRegistrationsUsedSince } from './store/operation-rows.js';
export type { PersistedOperation, PersistedOperationStore, PersistedSource } from './store/types.js';

// Ids and manifests
export { documentIdOf, readPersistedReference, sha256Hex } from './document-id.js';
export type { PersistedReference } from './document-id.js';
export { checkManifestAgainstSchema, ManifestError, parseManifest } from './manifest.js';
export type { ManifestEntry } from './manifest.js';

// Errors
export { PERSISTED_ERRORS, persistedQueryError } from './errors.js';
export type { PersistedErrorKind } from './errors.js';
