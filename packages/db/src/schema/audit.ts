import { bigint, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

// The tamper-evident audit trail: security events, append-only, each row chained to the one before by
// an HMAC (keyed from the signing key, which never reaches the database). docs/audit.md says what is recorded.

/**
 * One security event. `seq` is given by the writer (the head's plus one, under a transaction-scoped advisory
 * lock), never by a sequence: the chain has no gaps, so a missing row is a deleted one. `mac` is the HMAC of the
 * row's content and the previous row's `mac` (base64url). Nothing here is ever updated; rows leave only by
 * retention (AUDIT_RETENTION), after an anchor below.
 */
export const auditEvents = pgTable(
  'audit_events',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    time: timestamp('time', { withTimezone: true, mode: 'date' }).notNull(),
    type: text('type').notNull(),
    /** who acted (an account id), or null */
    actor: text('actor'),
    /** whom it concerns (an account id), or null */
    subject: text('subject'),
    /** the client's address (TRUST_PROXY decides whose forwarded headers count) */
    address: text('address'),
    /** at most 256 characters */
    userAgent: text('user_agent'),
    requestId: text('request_id'),
    details: jsonb('details').$type<Record<string, unknown>>().notNull(),
    mac: text('mac').notNull(),
  },
  (t) => [index('audit_events_subject_idx').on(t.subject, t.seq), index('audit_events_time_idx').on(t.time)],
);
export type AuditEventRow = typeof auditEvents.$inferSelect;

/**
 * Where the chain starts after retention purged its beginning: the last purged row's `seq` and `mac`, and the
 * signed checkpoint (a compact JWS of both) written before the purge. Verification starts from the newest anchor.
 */
export const auditAnchors = pgTable('audit_anchors', {
  seq: bigint('seq', { mode: 'number' }).primaryKey(),
  mac: text('mac').notNull(),
  checkpoint: text('checkpoint').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});
export type AuditAnchorRow = typeof auditAnchors.$inferSelect;
