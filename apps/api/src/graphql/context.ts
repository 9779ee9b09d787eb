import type { DatabaseHandle } from '@latchkey/db';
import type { LoaderFactory } from '../domain/loaders.js';
import type { SubjectLoader } from '../domain/subjects.js';
import type { YogaInitialContext } from 'graphql-yoga';
import type { Caller } from '@latchkey/auth/tokens';
import type { DocumentEventRecorder } from '../events/outbox.js';
import type { SubscriptionHub } from '../events/subscription-hub.js';

/** What resolvers may use; built once at start-up. */
export interface AppServices {
  /** the database; a request reads it through its own view (`dbOf`), bounded by the request's deadline */
  database: Pick<DatabaseHandle, 'until'>;
  /** DATABASE_TIMEOUT: a request's (or an event delivery's) deadline for everything it asks the database */
  databaseTimeoutMs: number;
  service: { name: string; version: string };
  /** the caller's volatile attributes, loaded once per request */
  subjects: SubjectLoader;
  /** batched lookups (organizations, users, memberships), one set per request */
  loaders: LoaderFactory;
  /** records document changes in the event outbox (subscriptions) */
  events: DocumentEventRecorder;
  /** this instance's subscriptions */
  subscriptions: SubscriptionHub;
}

/** What the context factory adds to Yoga's initial context. */
export interface RequestContext {
  /** the verified caller, or null for a guest (spec Authentication 2) */
  caller: Caller;
  /** a credential was presented but refused: still a guest, told so in the error */
  credentialRejected: boolean;
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
