// The tamper-evident audit trail: event types, the recording API, the chained writer, checkpoints,
// verification and retention. docs/audit.md.
export { AUDIT_EVENT_TYPES, NO_AUDIT, SIGN_IN_EVENT_TYPES } from './events.js';
export type { AuditDetails, AuditEvent, AuditEventType, AuditParties, AuditTrail, PendingAuditRow } from './events.js';
export { deriveAuditKey } from './chain.js';
export { findCheckpointJws, readCheckpoint, signCheckpoint } from './checkpoint.js';
export type { AuditCheckpoint } from './checkpoint.js';
export { createAuditWriter } from './writer.js';
export type { AuditWriter, AuditWriterOptions } from './writer.js';
export { createAuditTrail } from './trail.js';
export { verifyAuditChain } from './verify.js';
export type { AuditFinding, AuditVerification } from './verify.js';
export { checkpointAuditHead, purgeAuditTrail } from './retention.js';
