import type { IncomingMessage } from 'node:http';
import type { Factor } from '../factors/index.js';

// The security events of the audit trail: their names, and what each carries in `details`. Never a
// secret, a token, a code or a password attempt; a denial never carries the ability's arguments, only the record's
// type and id. docs/audit.md lists them.

/** Every event type, dotted lower case. */
export const AUDIT_EVENT_TYPES = [
  'sign_in.started',
  'sign_in.succeeded',
  'sign_in.failed',
  'factor.added',
  'factor.removed',
  'step_up.succeeded',
  'lockout',
  'session.ended',
  'app.allowed',
  'app.revoked',
  'role.changed',
  'legal_hold.changed',
  'policy.denied',
  'service.token_issued',
  'service.token_refused',
  'audit.dropped',
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** The sign-in events a user sees in their own history (the account page). */
export const SIGN_IN_EVENT_TYPES = ['sign_in.succeeded', 'sign_in.failed', 'step_up.succeeded', 'lockout'] as const;

/** What each event type carries. */
export interface AuditDetails {
  /** a sign-in began: a one-time token was asked for, a passkey ceremony or an upstream sign-in started */
  'sign_in.started': { method: Factor };
  /** the sign-in is complete: the browser holds a session (`method` is the factor proven last) */
  'sign_in.succeeded': { method: Factor; amr: string[]; acr: string };
  /** a wrong, used or expired credential of this method */
  'sign_in.failed': { method: Factor };
  'factor.added': { factor: Factor };
  'factor.removed': { factor: Factor };
  /** a session that no longer met a rule (or an application's `acr_values`) was completed with `method` */
  'step_up.succeeded': { method: Factor; amr: string[]; acr: string };
  /** the client address was locked out after too many failures of this method */
  lockout: { method: Factor };
  /** a session ended (signed out, ended by its user or an administrator, expired) */
  'session.ended': { sessionId: string; reason: string };
  /** a person allowed a third-party app (consent): the scopes it holds now */
  'app.allowed': { clientId: string; scope: string };
  /** a person revoked a third-party app (Connected apps): its grant, refresh tokens and access tokens end */
  'app.revoked': { clientId: string; reason: string };
  'role.changed': { organizationId: string; from: string | null; to: string };
  'legal_hold.changed': { documentId: string; legalHold: boolean };
  /**
   * `authorize` refused. Field-level denials (a field of a returned record) are recorded once per request and
   * ability (`aggregated: true`), with the first record's type and id.
   */
  'policy.denied': {
    policy: string;
    ability: string;
    reason: 'unauthenticated' | 'forbidden';
    recordType: string | null;
    recordId: string | null;
    aggregated?: true;
  };
  /** a service (client credentials) was given an access token; the actor is `client:<client id>` */
  'service.token_issued': { clientId: string; scope: string; dpop: boolean };
  /** a service that authenticated was refused a token (its organization does not exist) */
  'service.token_refused': { clientId: string; reason: string };
  /** events lost while the database could not be written or the queue was full, recorded once it answers again */
  'audit.dropped': { count: number };
}

/** Who and where: all optional. With `request`, its client address, user agent and request id are taken from it. */
export interface AuditParties {
  /** who acted (an account id, or `client:<client id>` for a service); null: nobody signed in, or the system */
  actor?: string | null;
  /** whom the event concerns (an account id) */
  subject?: string | null;
  /** the HTTP request the event happened in */
  request?: IncomingMessage;
  /** the request id, when there is no `request` to take it from (a GraphQL context holds it) */
  requestId?: string;
}

export type AuditEvent = { [Type in AuditEventType]: { type: Type; details: AuditDetails[Type] } & AuditParties }[AuditEventType];

/**
 * Records security events. `record` never throws and never waits for the database: the event joins a bounded
 * in-memory queue that a background writer drains (a full queue or a database that cannot be written drops it,
 * counted, and recorded as one `audit.dropped` event later).
 */
export interface AuditTrail {
  record(event: AuditEvent): void;
}

/** A trail that records nothing (the CLI's domain requests, tests of other things). */
export const NO_AUDIT: AuditTrail = { record() {} };

/** A row as the writer receives it: everything but its place in the chain (`seq`, `mac`). */
export interface PendingAuditRow {
  time: Date;
  type: AuditEventType;
  actor: string | null;
  subject: string | null;
  address: string | null;
  userAgent: string | null;
  requestId: string | null;
  details: Record<string, unknown>;
}
