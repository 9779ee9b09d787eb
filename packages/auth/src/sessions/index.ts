export { createEndedSessions, type EndedSessions, type EndedSessionsOptions } from './ended-sessions.js';
export {
  createSessionEnding,
  createSignedOutListing,
  type EndedSessionsResult,
  type EndSessions,
  type SessionEndingCause,
  type SessionEndingOptions,
} from './end-sessions.js';
export { isSessionId, listSessions, type SessionView } from './list-sessions.js';
export { recordSignInStep, watchSessionUse } from './session-use.js';
export {
  createAppRevocation,
  listAppsOf,
  type AppRevocationCause,
  type ConnectedAppView,
  type RevokeApp,
} from './revoke-app.js';
