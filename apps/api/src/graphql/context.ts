import type { DatabaseHandle } from '@latchkey/db';
import type { DomainServices } from '../domain/access.js';
import type { YogaInitialContext } from 'graphql-yoga';
import { proofOfRequest, type Caller, type ProofContext } from '@latchkey/auth/tokens';
import type { AuditTrail } from '@latchkey/auth';
import type { SubscriptionHub } from '../events/subscription-hub.js';
import type { SessionServices } from '../domain/sessions.js';

/** What resolvers may use; built once at start-up. */
export interface AppServices extends DomainServices {
  /** the database; a request reads it through its own view (`dbOf`), bounded by the request's deadline */
  database: Pick<DatabaseHandle, 'until'>;
  /** DATABASE_TIMEOUT: a request's (or an event delivery's) deadline for everything it asks the database */
  databaseTimeoutMs: number;
  service: { name: string; version: string };
  /** this instance's subscriptions */
  subscriptions: SubscriptionHub;
  /** the sessions ended on any instance, and the way to end them */
  sessions: SessionServices;
  /** records security events (docs/audit.md); never throws, never waits for the database */
  audit: AuditTrail;
}

/** What the context factory adds to Yoga's initial context. */
export interface RequestContext {
  /** the verified caller, or null for a guest (spec Authentication 2); set by generic-auth's resolveUserFn */
  caller: Caller;
  requestId: string;
  app: AppServices;
  /** set by a subscription before each event is resolved: the key of that event's fresh memos */
  eventScope?: DeadlineScope;
  /** when execution began, plus DATABASE_TIMEOUT: the deadline of the request's database work */
  deadline?: number;
}

/** A scope of per-request memos (the request, or one event of a subscription) and its database deadline. */
export interface DeadlineScope {
  deadline?: number;
}

export type GraphQLContext = YogaInitialContext & RequestContext;

/**
 * The `Authorization` value an operation carries: a WebSocket operation its connection's credential
 * (`connectionAuthorization`, given by the socket layer), an HTTP one its request's header.
 */
export function authorizationOfOperation(context: GraphQLContext): string | null | undefined {
  const fromConnection = (context as { connectionAuthorization?: string | null }).connectionAuthorization;
  if (fromConnection !== undefined) return fromConnection;
  const { req } = context as { req?: { headers: { authorization?: string } } };
  return req ? req.headers.authorization : context.request.headers.get('authorization');
}

/**
 * The DPoP proof an operation carries: over HTTP its request's `DPoP` header, method and path; over WebSocket the
 * key its connection proved at `connection_init` (`connectionProvenKey`, given by the socket layer).
 */
export function proofOfOperation(context: GraphQLContext): ProofContext | undefined {
  const provenKey = (context as { connectionProvenKey?: string }).connectionProvenKey;
  if (provenKey !== undefined) return { proof: undefined, method: 'GET', path: '/graphql', provenKey };
  const { req } = context as { req?: Parameters<typeof proofOfRequest>[0] };
  return req ? proofOfRequest(req) : undefined;
}
